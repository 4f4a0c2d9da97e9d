import { createAbortRace, type AbortRace } from "../shared/abort.ts";
import { boundText, isAbortError, isInstance, maxErrorLength } from "../errors.ts";
import { clampDelay } from "../numeric-options.ts";
import type { JsonValue, Session, ToolCallMessage } from "../session.ts";
import { isApprovalPause } from "./approval-pause.ts";
import { addCallBudget, unsetBudget, unsetSpend } from "./call-budget.ts";
import { pendingApprovals } from "./approval.ts";
import { findHandler, knownToolNames, type ExecutorSetup, type ToolCallRun } from "./executor-setup.ts";
import { toJsonOutput } from "./json-output.ts";
import { contentResult, isToolContent } from "./tool-content.ts";
import type { ToolContext, ToolDefinition, ToolHandler } from "./tool.ts";
import type { ToolOutcome } from "./tool-outcome.ts";
import {
  abortedResult,
  emptyPauseResult,
  invalidInputResult,
  thrownResult,
  timedOutResult,
  timedOutText,
  unknownToolResult,
} from "./tool-errors.ts";
import { validateToolInput, type ValidationResult } from "./validate-input.ts";
import { backgroundOf, handlerInput, isTaskCall, type Background } from "./background.ts";
import { startTask } from "./task-registry.ts";
import { deliveryResult, isTaskDelivery } from "./task-delivery.ts";

/**
 * Answers a call the gate let through: finds its handler, validates its input (the handler is not
 * called for input that fails), runs the handler under the tool's timeout and the run's abort, and
 * makes its output plain JSON. Every failure becomes the call's error result; a handler that paused
 * for approval (`ApprovalPause`) gives a pause carrying its session. Never throws, and the promise
 * it returns never rejects. Returns the outcome itself when nothing was awaited (a synchronous
 * handler), else one promise of it: at 2,000 concurrent runs the async frames of a tool call
 * cost about a third of the CPU (bench/README.md).
 */
export function invokeTool(
  run: ToolCallRun,
  definition: ToolDefinition | undefined,
): ToolOutcome | Promise<ToolOutcome> {
  return settleCall(run, beginTool(run, definition));
}

/**
 * A handler's promise not yet awaited (`beginTool`): whoever awaits it races it against the run's
 * abort (`abortRace.raceThen`) and makes its value or failure the call's outcome with
 * `settledOutput` / `failedOutput`, in the same reaction as whatever it does next.
 */
export type AwaitedOutput = { readonly type: "awaited-output"; readonly output: PromiseLike<unknown> };

/**
 * `invokeTool`, except that a handler's promise is left to the caller to await (`AwaitedOutput`):
 * the executor awaits a batch of one with the loop's next step in the same reaction.
 */
export function beginTool(
  run: ToolCallRun,
  definition: ToolDefinition | undefined,
): ToolOutcome | Promise<ToolOutcome> | AwaitedOutput {
  const { call, setup, signal } = run;
  const handler = findHandler(setup, definition, call.name);
  if (handler === undefined) return unknownToolResult(call, knownToolNames(setup));
  if (signal.aborted) return abortedResult(call);
  // The adapter could not accept what the model sent: the call never runs.
  if (typeof call.inputError === "string") return invalidInputResult(call, call.inputError);
  try {
    if (definition === undefined) return callHandler(run, handler, call.input);
    const background = backgroundOf(definition);
    // A task call is validated here, as any call, before it becomes a task. A program's call runs
    // in the foreground: the program awaits it, and its result never enters the session to carry a task.
    const task =
      background !== undefined &&
      run.task === undefined &&
      run.caller === undefined &&
      isTaskCall(background, call.input);
    const input = background === undefined ? call.input : handlerInput(background, call.input);
    const validation = validateToolInput(definition, input);
    if (validation instanceof Promise) return validateLater(run, handler, validation, task ? background : undefined);
    if (!validation.ok) return invalidInputResult(call, boundText(validation.message, maxErrorLength));
    if (task)
      return startTask(run, background, input, (taskRun) =>
        settleCall(taskRun, callHandler(taskRun, handler, validation.value)),
      );
    return callHandler(run, handler, validation.value);
  } catch (error) {
    return failedCall(call, error, signal);
  }
}

/** The call's outcome, or one promise of it: a handler's promise raced against the run's abort. */
export function settleCall(
  run: ToolCallRun,
  begun: ToolOutcome | Promise<ToolOutcome> | AwaitedOutput,
): ToolOutcome | Promise<ToolOutcome> {
  if (begun instanceof Promise || begun.type !== "awaited-output") return begun;
  return run.abortRace.raceThen(begun.output, run, settledOutput, failedOutput);
}

// An asynchronous validator (a Standard Schema's) is raced against the abort, as a handler is.
async function validateLater(
  run: ToolCallRun,
  handler: ToolHandler,
  validation: Promise<ValidationResult>,
  background: Background | undefined,
): Promise<ToolOutcome> {
  try {
    const checked = await run.abortRace.race(validation);
    if (!checked.ok) return invalidInputResult(run.call, boundText(checked.message, maxErrorLength));
    if (background !== undefined)
      return startTask(run, background, handlerInput(background, run.call.input), (taskRun) =>
        settleCall(taskRun, callHandler(taskRun, handler, checked.value)),
      );
    return await settleCall(run, callHandler(run, handler, checked.value));
  } catch (error) {
    return failedCall(run.call, error, run.signal);
  }
}

// A synchronous handler's value is used as it is; a promise is left to the caller to race against
// the run's abort (`settleCall`), so a handler that ignores its signal cannot hold the run.
function callHandler(
  run: ToolCallRun,
  handler: ToolHandler,
  input: unknown,
): ToolOutcome | Promise<ToolOutcome> | AwaitedOutput {
  const { call, setup, signal } = run;
  try {
    const timeout = timeoutOf(setup.definitions.get(call.name), setup);
    if (timeout !== undefined) {
      const start = (handlerSignal: AbortSignal): unknown => handler(input, contextFor(run, handlerSignal));
      return runWithTimeout(run, timeout, start).then(
        (output) => jsonResult(call, output, signal),
        (error) => failedCall(call, error, signal),
      );
    }
    const output = handler(input, contextFor(run, signal));
    // Answered at once: no promise to settle.
    if (!isPromiseLike(output)) return jsonResult(call, output, signal);
    return { type: "awaited-output", output };
  } catch (error) {
    return failedCall(call, error, signal);
  }
}

/**
 * What settles a handler's promise: its output as the call's result, or its failure (the abort
 * reason included). Shared functions reading the call's record: an awaited call makes no closures
 * to settle with.
 */
export function settledOutput(run: ToolCallRun, output: unknown): ToolOutcome {
  return jsonResult(run.call, output, run.signal);
}

export function failedOutput(run: ToolCallRun, error: unknown): ToolOutcome {
  return failedCall(run.call, error, run.signal);
}

// Rich content (`toolContent`) becomes parts and their text; an output that cannot be made plain
// JSON fails the call, as a throwing handler does.
function jsonResult(call: ToolCallMessage, output: unknown, signal: AbortSignal): ToolOutcome {
  try {
    if (isToolContent(output)) return contentResult(call.id, output);
    if (isTaskDelivery(output)) return deliveryResult(call.id, output);
    return { type: "tool_result", id: call.id, output: toJsonOutput(output) };
  } catch (error) {
    return failedCall(call, error, signal);
  }
}

// The tool's own `timeout`, else the executor's; `undefined` when there is none (or `Infinity`).
function timeoutOf(definition: ToolDefinition | undefined, setup: ExecutorSetup): number | undefined {
  const timeout =
    (definition !== undefined && "timeout" in definition ? definition.timeout : undefined) ?? setup.toolTimeout;
  return timeout === Number.POSITIVE_INFINITY ? undefined : timeout;
}

// Total: whatever inspecting the error throws (a hostile thrown value) becomes the call's error
// result too, so the promise `invokeTool` returns never rejects.
function failedCall(call: ToolCallMessage, error: unknown, signal: AbortSignal): ToolOutcome {
  try {
    return classifyFailure(call, error, signal);
  } catch (inner) {
    return thrownResult(call, inner);
  }
}

function classifyFailure(call: ToolCallMessage, error: unknown, signal: AbortSignal): ToolOutcome {
  if (isApprovalPause(error) && !signal.aborted) {
    // A pause with nothing to decide would resume as if approved: the call fails instead.
    if (pendingApprovals(error.session).length === 0) return emptyPauseResult(call);
    return { type: "approval-pending", call, nested: error.session };
  }
  if (signal.aborted && isAbortError(error)) return abortedResult(call);
  if (isInstance(error, ToolTimeoutError)) return timedOutResult(call, error.message);
  return thrownResult(call, error);
}

class ToolTimeoutError extends Error {
  override name = "ToolTimeoutError";
}

// Within a timeout, the call's own signal is raced as well: it aborts on the timeout.
function raceIfPending(output: unknown, abortRace: AbortRace): unknown {
  return isPromiseLike(output) ? abortRace.race(output) : output;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === "object" && "then" in value && typeof value.then === "function";
}

// The handler's signal aborts when the run aborts or the timeout passes, whichever is first;
// within the timeout the call's own signal is raced as well.
async function runWithTimeout(
  run: ToolCallRun,
  timeout: number,
  start: (handlerSignal: AbortSignal) => unknown,
): Promise<unknown> {
  const { call, signal: runSignal } = run;
  const controller = new AbortController();
  const onRunAbort = (): void => controller.abort(runSignal.reason);
  runSignal.addEventListener("abort", onRunAbort, { once: true });
  const timer = setTimeout(
    () => controller.abort(new ToolTimeoutError(timedOutText(call, timeout))),
    clampDelay(timeout),
  );
  const callRace = createAbortRace(controller.signal);
  try {
    return await raceIfPending(start(controller.signal), callRace);
  } catch (error) {
    if (controller.signal.reason instanceof ToolTimeoutError) throw controller.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
    runSignal.removeEventListener("abort", onRunAbort);
    callRace.dispose();
  }
}

function contextFor({ call, setup, turn, task, caller }: ToolCallRun, signal: AbortSignal): ToolContext {
  const { onEvent, spending } = setup;
  // Nobody listens: one shared no-op instead of a closure per call. Once the call's signal is
  // aborted (the run's end, its deadline, the tool's timeout) the call is answered without the
  // handler: what it reports after that (a subagent's closing events) would follow the run's end.
  const update =
    onEvent === undefined
      ? ignoreProgress
      : (progress: JsonValue): void => {
          if (signal.aborted) return;
          if (caller === undefined) onEvent({ type: "tool-execution-update", id: call.id, name: call.name, progress });
          else onEvent({ type: "tool-execution-update", id: call.id, name: call.name, progress, caller });
        };
  const { id, name } = call;
  const { session } = setup;
  // The budget's two fields are in the object from the start (`addCallBudget` fills them): a context
  // made whole, not grown a field at a time.
  const context: ToolContext =
    spending === undefined
      ? { signal, id, name, session, turn, update }
      : { signal, id, name, session, turn, update, budget: unsetBudget, spend: unsetSpend };
  if (setup.agentName !== undefined) context.agentName = setup.agentName;
  if (task !== undefined) context.task = { id: task.id, attempt: task.attempt };
  // What a program's call spends is recorded on its code call's result, which enters the session.
  if (spending !== undefined) addCallBudget(context, spending, caller ?? call.id);
  if (setup.approvals !== undefined) context.approvalPolicy = setup.approvals.policy;
  const { elicit } = setup;
  if (elicit !== undefined) context.elicit = (server, request, signal) => elicit(call.id, server, request, signal);
  // A subagent paused inside this call earlier: the handler resumes it.
  const nested: Session | undefined = call.approval?.nested;
  if (nested !== undefined) context.resume = nested;
  return context;
}

const ignoreProgress = (): void => undefined;
