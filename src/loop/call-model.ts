import { applyStrategies, compact } from "./make-room.ts";
import { aborted, runModelHook } from "./model-hooks.ts";
import { modelView, type ModelView } from "./model-view.ts";
import { addInput, checkInputBefore, guardTurn, type GuardedTurn, type TurnControl } from "./guarded-turn.ts";
import { modelTurn, type ModelTurn } from "./model-turn.ts";
import type { NextStep } from "./next-step.ts";
import type { OpenTurn } from "./open-turn.ts";
import type { RunContext } from "./run-context.ts";
import { checkFinalAnswer, type OutputContract } from "./structured-output.ts";
import { isContextOverflowError, MaxIterationsError, StructuredOutputError } from "../errors.ts";
import { budgetBeforeCall, chargeModelCall } from "./run-budget.ts";
import { formatLogLine } from "../logger.ts";
import { modelOwnFields } from "../model/model-own-fields.ts";
import { isToolCall, type Message, type ModelMessage, type ToolCallMessage } from "../session.ts";
import { sessionTurnsBackward } from "../session-turns.ts";
import { noteSessionChange } from "./sent-prefix.ts";
import { deliverTasks } from "./run-tasks.ts";

/**
 * The `call-model` step: unless the run was aborted, adds queued steering, checks the iteration
 * limit, makes room, calls the model (once more after a context overflow), lets the
 * `afterModelCall` hook replace its messages, holds a final answer to the output schema, and
 * adds the turn whole. Throws `MaxIterationsError` at the limit, `StructuredOutputError` when
 * the corrections are used up.
 */
export function callModelStep(run: RunContext): NextStep | Promise<NextStep> {
  const { state, queues } = run;
  if (run.signal.aborted) return endAborted(run, "");
  if (queues.steering.length > 0) addSteering(run);
  if (run.tasks !== undefined) deliverTasks(run, run.tasks);
  if (state.iteration >= run.maxIterations) throw maxIterationsError(run);
  const overBudget = budgetBeforeCall(run);
  if (overBudget !== undefined) throw overBudget;
  if (run.guardrails !== undefined || run.strategies !== undefined) return callModelAwaited(run);
  compact(run);
  const iteration = ++state.iteration;
  run.turnStart(iteration);
  // A model that answers at once, with nothing to wait for around it: no async frame of its own.
  const answer = askModel(run, iteration, undefined);
  if (answer instanceof Promise) return answer.then((answered) => takeAnswer(run, iteration, answered, undefined));
  return takeAnswer(run, iteration, answer, undefined);
}

// The step with something to wait for before the call: input guardrails, context strategies.
async function callModelAwaited(run: RunContext): Promise<NextStep> {
  const { state } = run;
  if (run.guardrails !== undefined && state.newInput.length > 0) {
    const blocked = await guardedStep(run, () => checkInputBefore(run));
    if (blocked !== undefined) return blocked;
  }
  compact(run);
  if (run.strategies !== undefined) await applyStrategies(run, run.strategies, "before-call");
  const iteration = ++state.iteration;
  run.turnStart(iteration);
  if (run.guardrails !== undefined) return await guardedCall(run, iteration, guardTurn(run, iteration));
  return await takeAnswer(run, iteration, await askModel(run, iteration, undefined), undefined);
}

// A model call with the guardrails around it: parallel input checks, hold-back, the output check.
async function guardedCall(run: RunContext, iteration: number, guarded: GuardedTurn): Promise<NextStep> {
  try {
    const answer = await askModel(run, iteration, guarded.control);
    const next = await guardedStep(run, guarded.afterCall);
    if (next !== undefined) {
      if (answer !== aborted) answer?.discard();
      return next;
    }
    return await takeAnswer(run, iteration, answer, guarded);
  } finally {
    guarded.dispose();
  }
}

// A guardrail step, or the end of an aborted run when the run was aborted while it waited.
async function guardedStep<T>(run: RunContext, step: () => Promise<T | undefined>): Promise<T | NextStep | undefined> {
  try {
    return await step();
  } catch (error) {
    if (run.signal.aborted) return endAborted(run, run.state.streamedText);
    throw error;
  }
}

// What the model answered, into the session: after the `afterModelCall` hook, the output schema and
// the output guardrails; at once when there are none of them.
function takeAnswer(
  run: RunContext,
  iteration: number,
  answer: ModelTurn | undefined | typeof aborted,
  guarded: GuardedTurn | undefined,
): NextStep | Promise<NextStep> {
  const { state } = run;
  if (answer === aborted) return endAborted(run, "");
  if (answer === undefined) return endAborted(run, state.streamedText);
  state.abandon = answer.discard;
  const { messages } = answer;
  spend(run, iteration, messages[messages.length - 1]);
  if (run.hooks?.afterModelCall === undefined && run.contract === undefined && guarded === undefined)
    return enterTurn(run, answer, { messages, problems: undefined });
  return checkAnswer(run, iteration, answer, guarded);
}

async function checkAnswer(
  run: RunContext,
  iteration: number,
  answer: ModelTurn,
  guarded: GuardedTurn | undefined,
): Promise<NextStep> {
  let { messages } = answer;
  // The `afterModelCall` hook may replace the model's messages.
  const afterModelCall = run.hooks?.afterModelCall;
  if (afterModelCall !== undefined) {
    const replaced = await runModelHook(run, "afterModelCall", () =>
      afterModelCall({ session: run.session, messages: answer.messages, iteration }),
    );
    if (replaced === aborted) {
      answer.discard();
      return endAborted(run, "");
    }
    // The hook stands in for the model: it decides no approval, held result or output either.
    if (replaced?.messages !== undefined) messages = replaced.messages.map(modelOwnFields);
  }
  // A final answer checked against the `output` schema carries its parsed value from the start.
  let problems: string | undefined;
  if (run.contract !== undefined && !messages.some(isToolCall))
    ({ messages, problems } = await checkOutput(run, run.contract, messages));
  if (guarded !== undefined) {
    if (problems !== undefined || messages.some(isToolCall)) guarded.release();
    else {
      const checked = await guardedStep(run, () => guarded.checkAnswer(messages));
      if (checked !== undefined && !Array.isArray(checked)) {
        answer.discard();
        return checked;
      }
      if (checked !== undefined) messages = checked;
    }
  }
  return enterTurn(run, answer, { messages, problems });
}

// What the call cost is counted against the budget, and its cache use reported.
function spend(run: RunContext, iteration: number, last: ModelMessage | undefined): void {
  const { state } = run;
  const usage = last?.usage;
  const change = state.prefixChange;
  state.prefixChange = undefined;
  if (usage === undefined) return;
  chargeModelCall(run, iteration, last!);
  const cacheReadTokens = usage.cacheReadTokens ?? 0;
  run.emit({
    type: "cache",
    iteration,
    inputTokens: usage.inputTokens,
    cacheReadTokens,
    cacheWriteTokens: usage.cacheWriteTokens ?? 0,
    hitRatio: usage.inputTokens > 0 ? cacheReadTokens / usage.inputTokens : 0,
    ...change,
  });
}

// Steering enters where the session ends; the next request's cache event names it should that
// have changed what an earlier request was sent.
function addSteering(run: RunContext): void {
  for (const message of run.queues.steering.splice(0)) {
    noteSessionChange(run.session, run.session.messages.length);
    addInput(run, message);
  }
}

/** Ends the run as aborted: an `aborted` assistant message (with what streamed, if anything) closes the session. */
function endAborted(run: RunContext, content: string): NextStep {
  run.add({ role: "assistant", content, stopReason: "aborted" });
  return { type: "end", end: { outcome: "aborted" } };
}

function maxIterationsError(run: RunContext): MaxIterationsError {
  const { maxIterations } = run;
  const limit = run.maxIterationsGiven ? `${maxIterations}` : `${maxIterations}, the default`;
  return new MaxIterationsError(
    `Agent "${run.agentName ?? "agent"}" reached maxIterations (${limit}) while the model still wanted to continue. ` +
      `Last action: ${describeLastAction(run.session.messages)}.`,
    { maxIterations, session: run.session },
  );
}

// The tool calls of the last model turn, or else the last message.
function describeLastAction(messages: readonly Message[]): string {
  const toolCalls: ToolCallMessage[] = [];
  for (const turn of sessionTurnsBackward(messages)) {
    if (turn.type !== "model") continue;
    for (const message of messages.slice(turn.start, turn.results)) if (isToolCall(message)) toolCalls.push(message);
    break;
  }
  if (toolCalls.length === 0) {
    const last = messages[messages.length - 1];
    return last === undefined ? "none" : formatLogLine(last, undefined, 160).replace(/^\[agent\] /, "");
  }
  return toolCalls.map((call) => `${call.name}(${JSON.stringify(call.input).slice(0, 100)})`).join(", ");
}

// The model's answer for this iteration, or `undefined` when the run was aborted during the call.
// Without a `beforeModelCall` hook there is nothing to wait for before the call, and without
// strategies no overflow to retry after: the model turn itself is the answer (a turn answered at
// once, without an async frame; see `modelTurn`).
function askModel(
  run: RunContext,
  iteration: number,
  control: TurnControl | undefined,
): ModelTurn | undefined | Promise<ModelTurn | undefined | typeof aborted> {
  if (run.hooks?.beforeModelCall === undefined && run.strategies === undefined)
    return callTurn(run, modelView(run, iteration, undefined), control);
  return askModelHooked(run, iteration, control);
}

// The call, under the guardrails' control when it has one (its own signal, the hold-back, no early starts).
function callTurn(
  run: RunContext,
  view: ModelView,
  control: TurnControl | undefined,
): ModelTurn | undefined | Promise<ModelTurn | undefined> {
  if (control === undefined) return modelTurn(run, view);
  view.context.signal = control.signal;
  return modelTurn({ ...run, abortRace: control.abortRace, emit: control.emit, eager: control.eager }, view);
}

// Too long for the model: the strategies make room, then the call is tried once more.
async function askModelHooked(
  run: RunContext,
  iteration: number,
  control: TurnControl | undefined,
): Promise<ModelTurn | undefined | typeof aborted> {
  for (let overflowed = false; ; overflowed = true) {
    const hook = run.hooks?.beforeModelCall;
    const changes =
      hook === undefined
        ? undefined
        : await runModelHook(run, "beforeModelCall", () =>
            hook({ session: run.session, tools: run.offer.offered(run.session), iteration }),
          );
    if (changes === aborted) return aborted;
    try {
      return await callTurn(run, modelView(run, iteration, changes), control);
    } catch (error) {
      if (overflowed || !isContextOverflowError(error) || run.strategies === undefined) throw error;
      // What the refused call streamed is void, as after a retry.
      run.state.streamedText = "";
      await applyStrategies(run, run.strategies, "overflow");
    }
  }
}

// The final answer checked against the output contract; throws once the corrections are used up.
async function checkOutput(
  run: RunContext,
  contract: OutputContract,
  messages: ModelMessage[],
): Promise<{ messages: ModelMessage[]; problems?: string }> {
  const checked = await checkFinalAnswer(contract, messages);
  const { problems } = checked;
  if (problems !== undefined && run.state.outputAttemptsLeft-- <= 0) {
    run.addTurn(checked.messages);
    throw new StructuredOutputError(`The final answer does not match the output schema: ${problems}`, {
      text: checked.text,
      problems,
    });
  }
  return checked;
}

const noCalls: ToolCallMessage[] = [];

// Adds the model's turn to the session and says what comes next.
function enterTurn(
  run: RunContext,
  answer: ModelTurn,
  { messages, problems }: { messages: ModelMessage[]; problems: string | undefined },
): NextStep {
  const { overrun } = run.state;
  if (overrun !== undefined && !run.state.overrunMarked) {
    run.state.overrunMarked = true;
    messages = messages.map((message, index) =>
      index === messages.length - 1 ? { ...message, budgetExceeded: overrun } : message,
    );
  }
  // The stored copies (with ts): approval marks must land on the session's own objects.
  const stored = run.addTurn(messages) as ModelMessage[];
  const last = stored[stored.length - 1];
  const toolCalls = problems === undefined ? toolCallsOf(stored) : noCalls;
  if (toolCalls.length === 0) {
    // Nothing to answer: what started early answers calls that are not in the session.
    answer.discard();
    return problems === undefined ? { type: "answered", last } : { type: "correct-output", last, problems };
  }
  const turn: OpenTurn = { toolCalls, last, started: answer.started, release: answer.release };
  return { type: "answer-tools", turn };
}

// The stored copy is the turn's own list: a turn of calls only (the usual one) is its own list of calls.
function toolCallsOf(stored: ModelMessage[]): ToolCallMessage[] {
  for (const message of stored) if (!isToolCall(message)) return stored.filter(isToolCall);
  return stored as ToolCallMessage[];
}
