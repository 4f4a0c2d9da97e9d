import { askGuardrails, type GuardrailDecision } from "../guardrails/ask-guardrails.ts";
import { guardedAnswer, guardedUserMessage, replaceGuarded, textOf } from "../guardrails/guarded-messages.ts";
import type { Guardrail, GuardrailKind } from "../guardrails/guardrail.ts";
import { createHoldBack, type HoldBack } from "../guardrails/hold-back.ts";
import { createAbortRace, type AbortRace } from "../shared/abort.ts";
import {
  isToolCall,
  type AssistantMessage,
  type GuardrailMark,
  type ModelMessage,
  type UserMessage,
} from "../session.ts";
import type { AgentEvent } from "./events.ts";
import { callModelNext, endAborted, type NextStep } from "./next-step.ts";
import type { RunContext } from "./run-context.ts";
import type { RunGuardrails } from "./run-guardrails.ts";
import type { EagerStarter } from "./eager-starter.ts";

/**
 * What one model call runs with in place of the run's own: a signal a guardrail can abort the call
 * with, and the stream's events going through the hold-back; no early tool starts while parallel
 * input guardrails have not settled.
 */
export type TurnControl = {
  readonly signal: AbortSignal;
  readonly abortRace: AbortRace;
  readonly emit: (event: AgentEvent) => void;
  readonly eager: EagerStarter | undefined;
};

/**
 * The guardrails around one model call, from `guardBefore` to `guardAfter`: what the call runs
 * with, the parallel input checks racing it, the hold-back of its stream, and an output block a
 * sentence check found while it streamed. `release` frees the call's signal whatever happened.
 */
export type CallGuard = {
  readonly control: TurnControl;
  readonly parallel: Promise<Tripped | undefined> | undefined;
  readonly holdBack: HoldBack<AgentEvent> | undefined;
  readonly tripped: { decision: GuardrailDecision | undefined };
};

/** What the model (or the `afterModelCall` hook in its place) answered, as `guardAfter` checks it. */
export type CheckedAnswer = { messages: ModelMessage[]; problems: string | undefined };

type Mark = Required<GuardrailMark>["guardrail"];

/**
 * The guardrails before a model call: the `before` input guardrails on the user messages new to
 * the run (`newInput`), each in order, then the start of the call's guard (the `parallel` ones race
 * the call, the hold-back holds its stream). A block replaces the message with its marker and ends
 * the run (`blocked`); a redact replaces its text. The next step when the call must not be made.
 */
export async function guardBefore(run: RunContext, guardrails: RunGuardrails): Promise<CallGuard | NextStep> {
  const { newInput } = guardrails;
  try {
    for (let index = 0; guardrails.input.length > 0 && index < newInput.length; index++) {
      const message = newInput[index]!;
      const decision = await askInput(run, guardrails.input, message);
      if (decision.action !== "allow") return blockInput(run, message, decision);
      if (decision.redacted !== undefined) newInput[index] = redactInput(run, message, decision);
    }
  } catch (error) {
    if (run.signal.aborted) return endAborted(run, run.state.streamedText);
    throw error;
  }
  return startGuard(run, guardrails);
}

/**
 * The guardrails after a model call (`answer`; undefined when the call was aborted): a parallel
 * input check that tripped (a block ends the run, a redact asks the model again), an output block
 * found sentence by sentence, then the output guardrails on a final answer (tool calls, or an
 * answer sent back for its schema, only release what was held back). The messages to enter, or
 * the next step.
 */
export function guardAfter(run: RunContext, guard: CallGuard, iteration: number, answer: undefined): Promise<NextStep>;
export function guardAfter(
  run: RunContext,
  guard: CallGuard,
  iteration: number,
  answer: CheckedAnswer,
): Promise<ModelMessage[] | NextStep>;
export async function guardAfter(
  run: RunContext,
  guard: CallGuard,
  iteration: number,
  answer: CheckedAnswer | undefined,
): Promise<ModelMessage[] | NextStep> {
  const { holdBack } = guard;
  try {
    const tripped = guard.parallel === undefined ? undefined : await guard.parallel;
    if (tripped !== undefined) {
      holdBack?.discard();
      retract(run);
      run.turnEnd(iteration, undefined);
      const { message, decision } = tripped;
      if (decision.action !== "allow") return blockInput(run, message, decision);
      // Redacted: the model is asked again, with the new text.
      redactInput(run, message, decision);
      return callModelNext;
    }
    const sentenceBlock = (await holdBack?.settled()) ?? guard.tripped.decision;
    if (sentenceBlock !== undefined && sentenceBlock.action === "block") {
      // The sentences shown passed; the answer they belong to does not stand.
      retract(run);
      return blockAnswer(run, iteration, [], sentenceBlock.name, sentenceBlock.message);
    }
    if (answer === undefined) return endAborted(run, run.state.streamedText);
    if (answer.problems !== undefined || answer.messages.some(isToolCall)) {
      holdBack?.release();
      return answer.messages;
    }
    return await checkAnswer(run, iteration, answer.messages, holdBack);
  } catch (error) {
    if (run.signal.aborted) return endAborted(run, run.state.streamedText);
    throw error;
  }
}

// Starts the guardrails of one model call: the parallel input checks, the hold-back of its stream.
function startGuard(run: RunContext, guardrails: RunGuardrails): CallGuard {
  const controller = new AbortController();
  const signal = AbortSignal.any([run.signal, controller.signal]);
  const abortRace = createAbortRace(signal);
  const tripped: CallGuard["tripped"] = { decision: undefined };
  const holdBack: HoldBack<AgentEvent> | undefined =
    guardrails.holdBack === undefined
      ? undefined
      : createHoldBack<AgentEvent>(guardrails.holdBack, run.emit, (delta) => ({ type: "text-delta", delta }), {
          check: (text) => askGuardrails(guardrails.sentence, { kind: "output", text, ...common(run) }, report(run)),
          tripped: (decision) => {
            tripped.decision = decision;
            controller.abort(new Error("an output guardrail blocked the answer"));
          },
        });
  // Parallel input checks race the model: a block or redact aborts the call.
  const inputs = guardrails.newInput.splice(0);
  const parallel =
    inputs.length === 0 || guardrails.parallelInput.length === 0
      ? undefined
      : checkParallel(run, guardrails.parallelInput, inputs, () =>
          controller.abort(new Error("an input guardrail tripped")),
        );
  const control: TurnControl = {
    signal,
    abortRace,
    emit: holdBack?.emit ?? run.emit,
    eager: parallel === undefined ? run.eager : undefined,
  };
  return { control, parallel, holdBack, tripped };
}

type Tripped = { message: UserMessage; decision: GuardrailDecision };

// The parallel guardrails on each new message; the first that does not simply allow trips the call.
async function checkParallel(
  run: RunContext,
  guardrails: readonly Guardrail[],
  inputs: readonly UserMessage[],
  trip: () => void,
): Promise<Tripped | undefined> {
  for (const message of inputs) {
    const decision = await askInput(run, guardrails, message);
    if (decision.action !== "allow" || decision.redacted !== undefined) {
      trip();
      return { message, decision };
    }
  }
  return undefined;
}

function askInput(run: RunContext, guardrails: readonly Guardrail[], message: UserMessage): Promise<GuardrailDecision> {
  return askGuardrails(guardrails, { kind: "input", text: textOf([message]), ...common(run) }, report(run));
}

// A block (a retry, which an input cannot take, blocks too) ends the run.
function blockInput(
  run: RunContext,
  message: UserMessage,
  decision: Exclude<GuardrailDecision, { action: "allow" }>,
): NextStep {
  const reason = decision.action === "block" ? decision.message : decision.feedback;
  replaceGuarded(
    run.session,
    message,
    guardedUserMessage(message, { name: decision.name, action: "block", message: reason }),
  );
  return blocked("input", decision.name, reason);
}

// The redacted message in the session, in place of `message`.
function redactInput(
  run: RunContext,
  message: UserMessage,
  decision: GuardrailDecision & { action: "allow" },
): UserMessage {
  const { name, replacement } = decision.redacted!;
  const mark: Mark = { name, action: "redact", replacement };
  return replaceGuarded(run.session, message, guardedUserMessage(message, mark)) as UserMessage;
}

async function checkAnswer(
  run: RunContext,
  iteration: number,
  messages: ModelMessage[],
  holdBack: HoldBack<AgentEvent> | undefined,
): Promise<ModelMessage[] | NextStep> {
  const guardrails = run.guardrails!;
  if (guardrails.output.length === 0) {
    holdBack?.release();
    return messages;
  }
  const decision = await askGuardrails(
    guardrails.output,
    { kind: "output", text: textOf(messages), ...common(run) },
    report(run),
    { unsaved: true },
  );
  if (decision.action === "allow") {
    if (decision.redacted === undefined) {
      holdBack?.release();
      guardrails.retries.clear();
      return messages;
    }
    // The redacted text stands in for what was shown; the original never enters the session.
    holdBack?.discard();
    retract(run);
    const { name, replacement } = decision.redacted;
    run.emit({ type: "text-delta", delta: replacement });
    guardrails.retries.clear();
    return [guardedAnswer(messages, { name, action: "redact", replacement })];
  }
  holdBack?.discard();
  retract(run);
  if (decision.action === "block") return blockAnswer(run, iteration, messages, decision.name, decision.message);
  const retries = guardrails.retries.get(decision.name) ?? 0;
  if (retries >= decision.maxRetries) return blockAnswer(run, iteration, messages, decision.name, decision.feedback);
  guardrails.retries.set(decision.name, retries + 1);
  // The answer never enters the session; the feedback does, for the model's next try.
  run.turnEnd(iteration, messages[messages.length - 1]);
  run.add({
    role: "user",
    content: decision.feedback,
    guardrail: { name: decision.name, action: "retry", feedback: decision.feedback },
  });
  return callModelNext;
}

/**
 * A tool's result given as the run's answer (`answer: "verbatim"`): the output guardrails check it
 * as any answer. A redact gives it redacted; a block (or a retry, which no model call can take
 * here) puts its marker in its place and ends the run. The answer to add, or the run's end.
 */
export async function guardGivenAnswer(
  run: RunContext,
  answer: AssistantMessage,
): Promise<AssistantMessage | NextStep> {
  const guardrails = run.guardrails;
  if (guardrails === undefined || guardrails.output.length === 0) return answer;
  let decision: GuardrailDecision;
  try {
    decision = await askGuardrails(
      guardrails.output,
      { kind: "output", text: answer.content, ...common(run) },
      report(run),
      { unsaved: true },
    );
  } catch (error) {
    if (!run.signal.aborted) throw error;
    return endAborted(run, "");
  }
  if (decision.action === "allow") {
    if (decision.redacted === undefined) return answer;
    const { name, replacement } = decision.redacted;
    return { ...answer, content: replacement, guardrail: { name, action: "redact", replacement } };
  }
  const message = decision.action === "block" ? decision.message : decision.feedback;
  run.add({ ...guardedAnswer([answer], { name: decision.name, action: "block", message }) });
  return blocked("output", decision.name, message);
}

// The answer's marker enters in its place, and the run ends `blocked`.
function blockAnswer(
  run: RunContext,
  iteration: number,
  messages: readonly ModelMessage[],
  name: string,
  message: string,
): NextStep {
  const stored = run.addTurn([guardedAnswer(messages, { name, action: "block", message })]);
  run.turnEnd(iteration, stored[0] as ModelMessage);
  return blocked("output", name, message);
}

function blocked(kind: GuardrailKind & ("input" | "output"), guardrail: string, message: string): NextStep {
  return { type: "end", end: { outcome: "blocked", kind, guardrail, message } };
}

/** Text already shown of an answer that will not stand: `text-retract` voids it. */
function retract(run: RunContext): void {
  const text = run.state.streamedText;
  if (text !== "") run.emit({ type: "text-retract", text });
}

function common(run: RunContext): { session: RunContext["session"]; agent?: string } {
  const agent = run.guardrails!.report.agent;
  return agent === undefined ? { session: run.session } : { session: run.session, agent };
}

function report(run: RunContext): NonNullable<RunContext["guardrails"]>["report"] {
  return run.guardrails!.report;
}
