import { createAbortRace, type AbortRace } from "../loop/abort.ts";
import { boundText, isAbortError, isInstance, maxErrorLength } from "../errors.ts";
import { clampDelay } from "../numeric-options.ts";
import type { Session, ToolCallMessage } from "../session.ts";
import { isApprovalPause } from "./approval-pause.ts";
import { pendingApprovals } from "./approval.ts";
import { findHandler, knownToolNames, type ExecutorSetup } from "./executor-setup.ts";
import { toJsonOutput } from "./json-output.ts";
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
 * for approval (`ApprovalPause`) gives a pause carrying its session. Never rejects for a failure of
 * the tool.
 */
export async function invokeTool(
  call: ToolCallMessage,
  definition: ToolDefinition | undefined,
  setup: ExecutorSetup,
  signal: AbortSignal,
  abortRace: AbortRace,
): Promise<ToolOutcome> {
  const handler = findHandler(setup, definition, call.name);
  if (handler === undefined) return unknownToolResult(call, knownToolNames(setup));
  if (signal.aborted) return abortedResult(call);
  // The adapter could not accept what the model sent: the call never runs.
  if (typeof call.inputError === "string") return invalidInputResult(call, call.inputError);
  let input: unknown = call.input;
  try {
    if (definition !== undefined) {
      let validation = validateToolInput(definition, input);
      if (validation instanceof Promise) validation = await abortRace.race(validation);
      if (!validation.ok) return invalidInputResult(call, boundText(validation.message, maxErrorLength));
      input = validation.value;
    }
    const timeout = (definition !== undefined && "timeout" in definition ? definition.timeout : undefined) ?? setup.toolTimeout;
    let output =
      timeout === undefined || timeout === Number.POSITIVE_INFINITY
        ? runHandler(handler, input, contextFor(call, setup, signal), abortRace)
        : runWithTimeout(handler, input, call, setup, signal, timeout);
    // A synchronous handler's value is used as it is: no extra turn of the event loop.
    if (output instanceof Promise) output = await output;
    return { type: "tool_result", id: call.id, output: toJsonOutput(output) };
  } catch (error) {
    return failedCall(call, error, signal);
  }
}

function failedCall(call: ToolCallMessage, error: unknown, signal: AbortSignal): ToolOutcome {
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

// A handler that ignores its signal cannot hold the run: the race settles on abort and the
// handler's late result is dropped.
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
  const timer = setTimeout(() => controller.abort(new ToolTimeoutError(timedOutText(call, timeout))), clampDelay(timeout));
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
    update: (progress) => onEvent?.({ type: "tool-execution-update", id: call.id, name: call.name, progress }),
  };
  if (setup.agentName !== undefined) context.agentName = setup.agentName;
  // A subagent paused inside this call earlier: the handler resumes it.
  const nested: Session | undefined = call.approval?.nested;
  if (nested !== undefined) context.resume = nested;
  return context;
}
