import { askGuardrails, type GuardrailDecision } from "../guardrails/ask-guardrails.ts";
import { guardedAnswer, guardedUserMessage, replaceGuarded, textOf } from "../guardrails/guarded-messages.ts";
import type { Guardrail, GuardrailKind } from "../guardrails/guardrail.ts";
import { createHoldBack, type HoldBack } from "../guardrails/hold-back.ts";
import { createAbortRace, type AbortRace } from "../shared/abort.ts";
import type { AssistantMessage, GuardrailMark, ModelMessage, UserMessage } from "../session.ts";
import type { AgentEvent } from "./events.ts";
import { callModelNext, type NextStep } from "./next-step.ts";
import type { RunContext } from "./run-context.ts";
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

/** The guardrails around one model call: started with the call, asked again once it answered. */
export type GuardedTurn = {
  readonly control: TurnControl;
  /**
   * After the call: waits for the parallel input guardrails and for a sentence check in flight.
   * The next step when one of them blocked (or redacted the input: the model is asked again).
   */
  readonly afterCall: () => Promise<NextStep | undefined>;
  /** A final answer, checked by the output guardrails: the messages to enter, or the next step. */
  readonly checkAnswer: (messages: ModelMessage[]) => Promise<ModelMessage[] | NextStep>;
  /** The turn has tool calls (or is sent back for its schema): what was held back is shown. */
  readonly release: () => void;
  /** Frees the call's signal. */
  readonly dispose: () => void;
};

type Mark = Required<GuardrailMark>["guardrail"];

/** Adds a user message of the caller's (steering, a follow-up): the input guardrails check it before the next call. */
export function addInput(run: RunContext, message: UserMessage): void {
  run.add(message);
  const { session, state } = run;
  if (run.guardrails !== undefined) state.newInput.push(session.messages[session.messages.length - 1] as UserMessage);
}

/**
 * The `before` input guardrails on the user messages new to the run (`state.newInput`), each in
 * order; the `parallel` ones are left for the model call. A block replaces the message with its
 * marker and ends the run (`blocked`); a redact replaces its text. Undefined: the model may be called.
 */
export async function checkInputBefore(run: RunContext): Promise<NextStep | undefined> {
  const guardrails = run.guardrails!;
  const { state } = run;
  if (guardrails.input.length === 0) {
    if (guardrails.parallelInput.length === 0) state.newInput = [];
    return undefined;
  }
  for (let index = 0; index < state.newInput.length; index++) {
    const message = state.newInput[index]!;
    const decision = await askInput(run, guardrails.input, message);
    if (decision.action !== "allow") return blockInput(run, message, decision);
    if (decision.redacted !== undefined) state.newInput[index] = redactInput(run, message, decision);
  }
  if (guardrails.parallelInput.length === 0) state.newInput = [];
  return undefined;
}

/** Starts the guardrails of one model call: the parallel input checks, the hold-back of its stream. */
export function guardTurn(run: RunContext, iteration: number): GuardedTurn {
  const guardrails = run.guardrails!;
  const { state } = run;
  const controller = new AbortController();
  const signal = AbortSignal.any([run.signal, controller.signal]);
  const abortRace = createAbortRace(signal);
  let outputBlock: GuardrailDecision | undefined;
  const holdBack: HoldBack<AgentEvent> | undefined =
    guardrails.holdBack === undefined
      ? undefined
      : createHoldBack<AgentEvent>(guardrails.holdBack, run.emit, (delta) => ({ type: "text-delta", delta }), {
          check: (text) => askGuardrails(guardrails.sentence, { kind: "output", text, ...common(run) }, report(run)),
          tripped: (decision) => {
            outputBlock = decision;
            controller.abort(new Error("an output guardrail blocked the answer"));
          },
        });
  // Parallel input checks race the model: a block or redact aborts the call.
  const inputs = state.newInput.splice(0);
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
  return {
    control,
    afterCall: async () => {
      const tripped = parallel === undefined ? undefined : await parallel;
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
      const sentenceBlock = (await holdBack?.settled()) ?? outputBlock;
      if (sentenceBlock === undefined || sentenceBlock.action !== "block") return undefined;
      // The sentences shown passed; the answer they belong to does not stand.
      retract(run);
      return blockAnswer(run, iteration, [], sentenceBlock.name, sentenceBlock.message);
    },
    checkAnswer: (messages) => checkAnswer(run, iteration, messages, holdBack),
    release: () => holdBack?.release(),
    dispose: () => abortRace.dispose(),
  };
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
  const { state } = run;
  if (decision.action === "allow") {
    if (decision.redacted === undefined) {
      holdBack?.release();
      state.guardrailRetries.clear();
      return messages;
    }
    // The redacted text stands in for what was shown; the original never enters the session.
    holdBack?.discard();
    retract(run);
    const { name, replacement } = decision.redacted;
    run.emit({ type: "text-delta", delta: replacement });
    state.guardrailRetries.clear();
    return [guardedAnswer(messages, { name, action: "redact", replacement })];
  }
  holdBack?.discard();
  retract(run);
  if (decision.action === "block") return blockAnswer(run, iteration, messages, decision.name, decision.message);
  const retries = state.guardrailRetries.get(decision.name) ?? 0;
  if (retries >= decision.maxRetries) return blockAnswer(run, iteration, messages, decision.name, decision.feedback);
  state.guardrailRetries.set(decision.name, retries + 1);
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
    run.add({ role: "assistant", content: "", stopReason: "aborted" });
    return { type: "end", end: { outcome: "aborted" } };
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
