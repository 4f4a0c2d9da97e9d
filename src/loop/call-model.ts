import { compact, makeRoom, applyStrategies } from "./make-room.ts";
import { aborted, runModelHook } from "./model-hooks.ts";
import { modelView } from "./model-view.ts";
import { guardAfter, guardBefore, type CheckedAnswer, type TurnControl } from "./guarded-turn.ts";
import { addInput } from "./run-guardrails.ts";
import { modelTurn, type ModelTurn } from "./model-turn.ts";
import { endAborted, type NextStep } from "./next-step.ts";
import type { RunContext } from "./run-context.ts";
import { checkFinalAnswer } from "./structured-output.ts";
import { isContextOverflowError, MaxIterationsError, StructuredOutputError } from "../errors.ts";
import { budgetBeforeCall, chargeModelCall } from "./run-budget.ts";
import { formatLogLine } from "../logger.ts";
import { modelOwnFields } from "../model/model-own-fields.ts";
import { isToolCall, type Message, type ModelMessage, type ToolCallMessage } from "../session.ts";
import { sessionTurnsBackward } from "../session-turns.ts";
import { noteSessionChange } from "./sent-prefix.ts";
import { deliverTasks } from "./run-tasks.ts";

/**
 * The `call-model` step, what happens to one model call in order: unless the run was aborted,
 * queued steering and delivered tasks enter, the iteration limit and the budget are checked, the
 * input guardrails run, room is made, the model is called (once more after a context overflow),
 * the `afterModelCall` hook may replace its messages, a final answer is held to the output schema
 * and the output guardrails, and the turn enters whole. Throws `MaxIterationsError` at the limit,
 * `BudgetExceededError` once the budget is used up, `StructuredOutputError` when the corrections
 * are used up.
 */
export function callModelStep(run: RunContext): NextStep | Promise<NextStep> {
  if (run.signal.aborted) return endAborted(run, "");
  if (run.queues.steering.length > 0) addSteering(run);
  if (run.tasks !== undefined) {
    // A durable run first settles what its journal says has settled.
    const delivered = deliverTasks(run, run.tasks);
    if (delivered !== undefined) return delivered.then(() => callModelDelivered(run));
  }
  return callModelDelivered(run);
}

// The step once steering and tasks' outcomes are in.
function callModelDelivered(run: RunContext): NextStep | Promise<NextStep> {
  if (run.state.iteration >= run.maxIterations) throw maxIterationsError(run);
  // Only a run with a budget (its own, or one it is within) can be over it.
  if (run.limited) {
    const overBudget = budgetBeforeCall(run);
    if (overBudget !== undefined) throw overBudget;
  }
  if (run.waitsAroundCall) return callModelWaiting(run);
  // Nothing to wait for around the call: a model that answers at once takes no async frame.
  compact(run);
  const iteration = startTurn(run);
  const answer = modelTurn(run, modelView(run, iteration, undefined));
  if (answer instanceof Promise) return answer.then((turn) => enterAnswer(run, iteration, turn));
  return enterAnswer(run, iteration, answer);
}

// The same call with what may wait around it: guardrails, context strategies, model hooks, the
// output schema.
async function callModelWaiting(run: RunContext): Promise<NextStep> {
  const guard = run.guardrails === undefined ? undefined : await guardBefore(run, run.guardrails);
  if (guard !== undefined && "type" in guard) return guard;
  try {
    await makeRoom(run);
    const iteration = startTurn(run);
    const answer = await askModel(run, iteration, guard?.control);
    if (answer === undefined)
      return guard === undefined
        ? endAborted(run, run.state.streamedText)
        : await guardAfter(run, guard, iteration, undefined);
    run.state.abandon = answer.discard;
    spend(run, iteration, answer.messages);
    const checked = await reviewAnswer(run, iteration, answer);
    if (checked === aborted) {
      answer.discard();
      return endAborted(run, "");
    }
    const messages = guard === undefined ? checked.messages : await guardAfter(run, guard, iteration, checked);
    if (!Array.isArray(messages)) {
      answer.discard();
      return messages;
    }
    return enterTurn(run, answer, messages, checked.problems);
  } finally {
    guard?.control.abortRace.dispose();
  }
}

// `turn-start`: model call number `iteration` begins.
function startTurn(run: RunContext): number {
  const iteration = ++run.state.iteration;
  run.turnStart(iteration);
  return iteration;
}

// The model's answer into the session, when nothing reviews it.
function enterAnswer(run: RunContext, iteration: number, answer: ModelTurn | undefined): NextStep {
  if (answer === undefined) return endAborted(run, run.state.streamedText);
  run.state.abandon = answer.discard;
  spend(run, iteration, answer.messages);
  return enterTurn(run, answer, answer.messages, undefined);
}

// What the call cost is counted against the budget, and its cache use reported to whoever can hear it.
function spend(run: RunContext, iteration: number, messages: readonly ModelMessage[]): void {
  const { prefix } = run;
  const last = messages[messages.length - 1];
  const usage = last?.usage;
  const change = prefix?.change;
  if (prefix !== undefined) prefix.change = undefined;
  if (usage === undefined) return;
  chargeModelCall(run, iteration, last!);
  if (prefix === undefined) return;
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

// The `afterModelCall` hook may replace the model's messages; a final answer is then checked against
// the `output` schema (it carries its parsed value from the start). `aborted`: the run was aborted
// while the hook ran.
async function reviewAnswer(
  run: RunContext,
  iteration: number,
  answer: ModelTurn,
): Promise<CheckedAnswer | typeof aborted> {
  let { messages } = answer;
  const afterModelCall = run.hooks?.afterModelCall;
  if (afterModelCall !== undefined) {
    const replaced = await runModelHook(run, "afterModelCall", () =>
      afterModelCall({ session: run.session, messages: answer.messages, iteration }),
    );
    if (replaced === aborted) return aborted;
    // The hook stands in for the model: it decides no approval, held result or output either.
    if (replaced?.messages !== undefined) messages = replaced.messages.map(modelOwnFields);
  }
  const { output } = run;
  if (output === undefined || messages.some(isToolCall)) return { messages, problems: undefined };
  const checked = await checkFinalAnswer(output.contract, messages);
  const { problems } = checked;
  if (problems !== undefined && output.attemptsLeft-- <= 0) {
    run.addTurn(checked.messages);
    throw new StructuredOutputError(`The final answer does not match the output schema: ${problems}`, {
      text: checked.text,
      problems,
    });
  }
  return { messages: checked.messages, problems };
}

// Steering enters where the session ends; the next request's cache event names it should that
// have changed what an earlier request was sent.
function addSteering(run: RunContext): void {
  for (const message of run.queues.steering.splice(0)) {
    noteSessionChange(run.session, run.session.messages.length);
    addInput(run, message);
  }
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

// The model's answer for this iteration, or `undefined` when the run was aborted before or during
// the call: the `beforeModelCall` hook first, then the call (under the guardrails' control when it
// has one); too long for the model, the strategies make room and the call is tried once more.
async function askModel(
  run: RunContext,
  iteration: number,
  control: TurnControl | undefined,
): Promise<ModelTurn | undefined> {
  for (let overflowed = false; ; overflowed = true) {
    const hook = run.hooks?.beforeModelCall;
    const changes =
      hook === undefined
        ? undefined
        : await runModelHook(run, "beforeModelCall", () =>
            hook({ session: run.session, tools: run.offer.offered(run.session), iteration }),
          );
    if (changes === aborted) return undefined;
    const view = modelView(run, iteration, changes);
    try {
      if (control === undefined) return await modelTurn(run, view);
      view.context.signal = control.signal;
      return await modelTurn({ ...run, abortRace: control.abortRace, emit: control.emit, eager: control.eager }, view);
    } catch (error) {
      if (overflowed || !isContextOverflowError(error) || run.strategies === undefined) throw error;
      // What the refused call streamed is void, as after a retry.
      run.state.streamedText = "";
      await applyStrategies(run, run.strategies, "overflow");
    }
  }
}

const noCalls: ToolCallMessage[] = [];

// Adds the model's turn to the session and says what comes next.
function enterTurn(
  run: RunContext,
  answer: ModelTurn,
  messages: ModelMessage[],
  problems: string | undefined,
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
  return { type: "answer-tools", toolCalls, last, started: answer.started, release: answer.release };
}

// The stored copy is the turn's own list: a turn of calls only (the usual one) is its own list of calls.
function toolCallsOf(stored: ModelMessage[]): ToolCallMessage[] {
  for (const message of stored) if (!isToolCall(message)) return stored.filter(isToolCall);
  return stored as ToolCallMessage[];
}
