import { createAbortRace, type AbortRace } from "../loop/abort.ts";
import { boundText, isAbortError, isInstance, maxErrorLength } from "../errors.ts";
import { clampDelay } from "../numeric-options.ts";
import type { Session, ToolCallMessage } from "../session.ts";
import { isApprovalPause } from "./approval-pause.ts";
import { pendingApprovals } from "./approval.ts";
import { findHandler, knownToolNames, type ExecutorSetup } from "./executor-setup.ts";
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
import { validateToolInput } from "./validate-input.ts";

/**
 * Answers a call the gate let through: finds its handler, validates its input (the handler is not
 * called for input that fails), runs the handler under the tool's timeout and the run's abort, and
 * makes its output plain JSON. Every failure becomes the call's error result; a handler that paused
 * for approval (`ApprovalPause`) gives a pause carrying its session. Never throws, and the promise
 * it returns never rejects. Returns the outcome itself when nothing was awaited (a synchronous
 * handler), else one promise of it: a call pays for no async frame of its own.
 */
export function invokeTool(
  call: ToolCallMessage,
  definition: ToolDefinition | undefined,
  setup: ExecutorSetup,
  signal: AbortSignal,
  abortRace: AbortRace,
): Eventually<ToolOutcome> {
  const handler = findHandler(setup, definition, call.name);
  if (handler === undefined) return unknownToolResult(call, knownToolNames(setup));
  if (signal.aborted) return abortedResult(call);
  // The adapter could not accept what the model sent: the call never runs.
  if (typeof call.inputError === "string") return invalidInputResult(call, call.inputError);
  const invocation: Invocation = { call, definition, handler, setup, signal, abortRace };
  try {
    if (definition === undefined) return callHandler(invocation, call.input);
    const validation = validateToolInput(definition, call.input);
    if (!(validation instanceof Promise)) return validated(invocation, validation);
    return abortRace.race(validation).then(
      (checked) => validated(invocation, checked),
      (error: unknown) => failedCall(call, error, signal),
    );
  } catch (error) {
    return failedCall(call, error, signal);
  }
}

/** A value, or a promise of it when something had to be awaited. */
export type Eventually<T> = T | Promise<T>;

// One call on its way through the handler, passed whole to the steps below.
type Invocation = {
  readonly call: ToolCallMessage;
  readonly definition: ToolDefinition | undefined;
  readonly handler: ToolHandler;
  readonly setup: ExecutorSetup;
  readonly signal: AbortSignal;
  readonly abortRace: AbortRace;
};

function validated(
  invocation: Invocation,
  validation: Awaited<ReturnType<typeof validateToolInput>>,
): Eventually<ToolOutcome> {
  try {
    if (!validation.ok) return invalidInputResult(invocation.call, boundText(validation.message, maxErrorLength));
    return callHandler(invocation, validation.value);
  } catch (error) {
    return failedCall(invocation.call, error, invocation.signal);
  }
}

// A synchronous handler's value is used as it is: no extra turn of the event loop.
function callHandler(invocation: Invocation, input: unknown): Eventually<ToolOutcome> {
  const { call, definition, handler, setup, signal } = invocation;
  try {
    const timeout =
      (definition !== undefined && "timeout" in definition ? definition.timeout : undefined) ?? setup.toolTimeout;
    if (timeout !== undefined && timeout !== Number.POSITIVE_INFINITY) {
      return runWithTimeout(handler, input, call, setup, signal, timeout).then(
        (value) => jsonResult(call, value, signal),
        (error: unknown) => failedCall(call, error, signal),
      );
    }
    const output = handler(input, contextFor(call, setup, signal));
    if (!isPromiseLike(output)) return jsonResult(call, output, signal);
    // A handler that ignores its signal cannot hold the run: the race settles on abort and the
    // handler's late result is dropped.
    return invocation.abortRace.raceThen(
      output,
      (value) => jsonResult(call, value, signal),
      (error: unknown) => failedCall(call, error, signal),
    );
  } catch (error) {
    return failedCall(call, error, signal);
  }
}

// Rich content (`toolContent`) becomes parts and their text; an output that cannot be made plain
// JSON fails the call, as a throwing handler does.
function jsonResult(call: ToolCallMessage, output: unknown, signal: AbortSignal): ToolOutcome {
  try {
    if (isToolContent(output)) return contentResult(call.id, output);
    return { type: "tool_result", id: call.id, output: toJsonOutput(output) };
  } catch (error) {
    return failedCall(call, error, signal);
  }
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
function runHandler(handler: ToolHandler, input: unknown, context: ToolContext, abortRace: AbortRace): unknown {
  const output = handler(input, context);
  if (isPromiseLike(output)) return abortRace.race(output);
  return output;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === "object" && "then" in value && typeof value.then === "function";
}

// The handler's signal aborts when the run aborts or the timeout passes, whichever is first.
async function runWithTimeout(
  handler: ToolHandler,
  input: unknown,
  call: ToolCallMessage,
  setup: ExecutorSetup,
  runSignal: AbortSignal,
  timeout: number,
): Promise<unknown> {
  const controller = new AbortController();
  const onRunAbort = (): void => controller.abort(runSignal.reason);
  runSignal.addEventListener("abort", onRunAbort, { once: true });
  const timer = setTimeout(
    () => controller.abort(new ToolTimeoutError(timedOutText(call, timeout))),
    clampDelay(timeout),
  );
  const callRace = createAbortRace(controller.signal);
  try {
    return await runHandler(handler, input, contextFor(call, setup, controller.signal), callRace);
  } catch (error) {
    if (controller.signal.reason instanceof ToolTimeoutError) throw controller.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
    runSignal.removeEventListener("abort", onRunAbort);
    callRace.dispose();
  }
}

function contextFor(call: ToolCallMessage, setup: ExecutorSetup, signal: AbortSignal): ToolContext {
  const { onEvent } = setup;
  const context: ToolContext = {
    signal,
    id: call.id,
    name: call.name,
    session: setup.session,
    // Nobody listens: one shared no-op instead of a closure per call.
    update:
      onEvent === undefined
        ? ignoreProgress
        : (progress) => onEvent({ type: "tool-execution-update", id: call.id, name: call.name, progress }),
  };
  if (setup.agentName !== undefined) context.agentName = setup.agentName;
  // A subagent paused inside this call earlier: the handler resumes it.
  const nested: Session | undefined = call.approval?.nested;
  if (nested !== undefined) context.resume = nested;
  return context;
}

const ignoreProgress = (): void => undefined;
