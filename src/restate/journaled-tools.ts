import { CancelledError, RetryableError, type ObjectContext } from "@restatedev/restate-sdk";
import { AbortError, describeError, isInstance } from "../errors.ts";
import { ApprovalPause } from "../tools/approval-pause.ts";
import type { JsonValue, Session } from "../session.ts";
import type { ToolContext, ToolDefinition, ToolHandler, ToolHandlers } from "../tools/tool.ts";
import type { ReplayClock } from "./replay-clock.ts";
import { fitText } from "./step-size.ts";
import { clampDelay } from "../numeric-options.ts";
import type { StepScheduler } from "./step-scheduler.ts";
import type { ToolCallRecorder } from "../tools/tool-call-recorder.ts";

/**
 * The tools with each handler run as one journaled step (`ctx.run`, named `tool <call id>`): its
 * output, its error, its timeout or its pause is stored in the journal, so a call that finished is
 * never run again on replay, and the loop builds the same result from it. Timeouts (the tool's
 * `timeout`, else `toolTimeout`) are kept inside the step, where they are decided once; the
 * returned definitions carry none, so the loop sets no timer of its own. A handler that throws
 * Restate's `RetryableError` has its step retried by Restate instead of answering the model.
 * A model that records tool calls (a cassette with `tools: "record"`, `recorder`) gets each call
 * inside its step, so a call is recorded (or answered from the recording) once, however often
 * Restate replays the run.
 */
export function journaledTools(
  ctx: ObjectContext,
  tools: readonly ToolDefinition[],
  toolHandlers: ToolHandlers,
  steps: {
    toolTimeout: number | undefined;
    scheduler: StepScheduler;
    clock: ReplayClock;
    maxStepBytes: number;
    recorder: ToolCallRecorder | undefined;
  },
): { tools: ToolDefinition[]; toolHandlers: ToolHandlers } {
  const { toolTimeout, scheduler, clock, maxStepBytes, recorder } = steps;
  const wrap = (name: string, handler: ToolHandler, timeout: number | undefined): ToolHandler =>
    journaledHandler(ctx, name, recorded(name, handler, recorder), timeout, scheduler, clock, maxStepBytes);
  const wrappedTools = tools.map((definition): ToolDefinition => {
    if (!("handler" in definition)) return definition;
    const { timeout, ...rest } = definition;
    return { ...rest, handler: wrap(definition.name, definition.handler, timeout ?? toolTimeout) };
  });
  const wrappedHandlers: ToolHandlers = {};
  // Defined, not assigned: a handler named `__proto__` must stay an entry, not become the prototype.
  for (const [name, handler] of Object.entries(toolHandlers)) {
    Object.defineProperty(wrappedHandlers, name, {
      value: wrap(name, handler, toolTimeout),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return { tools: wrappedTools, toolHandlers: wrappedHandlers };
}

// The handler as the recorder runs it: recording calls it and keeps its output, replaying answers
// from the recording without calling it.
function recorded(name: string, handler: ToolHandler, recorder: ToolCallRecorder | undefined): ToolHandler {
  if (recorder === undefined) return handler;
  return (input, context) =>
    recorder(
      { id: context.id, name, input, ...(context.agentName === undefined ? {} : { agent: context.agentName }) },
      async () => handler(input, context),
    );
}

/** What a tool step stores in the journal (plain JSON). */
type ToolStep =
  | { output: JsonValue; at: number }
  | { error: string; at: number }
  | { timeout: number; at: number }
  | { pause: Session; at: number }
  | { aborted: true; at: number };

function journaledHandler(
  ctx: ObjectContext,
  name: string,
  handler: ToolHandler,
  timeout: number | undefined,
  scheduler: StepScheduler,
  clock: ReplayClock,
  maxStepBytes: number,
): ToolHandler {
  return async (input: unknown, context: ToolContext) => {
    const step = ctx.run<ToolStep>(`tool ${context.id}`, async () =>
      fitStep(await runHandler(handler, input, context, timeout), maxStepBytes),
    );
    let result: ToolStep;
    try {
      result = await scheduler.await(step);
    } catch (error) {
      // The run was cancelled: the loop answers this call as aborted.
      if (isInstance(error, CancelledError)) throw new AbortError();
      throw error;
    }
    clock.toolEnded(context.id, result.at);
    if ("output" in result) return result.output;
    if ("error" in result) throw new Error(result.error);
    if ("timeout" in result) throw new Error(`tool "${name}" timed out after ${result.timeout} ms`);
    if ("pause" in result) throw new ApprovalPause(result.pause);
    throw new AbortError();
  };
}

// Inside the step: the handler with its own signal, raced against its timeout and the run's abort
// (a handler that ignores its signal cannot hold the step).
async function runHandler(
  handler: ToolHandler,
  input: unknown,
  context: ToolContext,
  timeout: number | undefined,
): Promise<ToolStep> {
  const controller = new AbortController();
  const stop = (reason: unknown): void => controller.abort(reason);
  const onRunAbort = (): void => stop(context.signal.reason);
  context.signal.addEventListener("abort", onRunAbort, { once: true });
  if (context.signal.aborted) stop(context.signal.reason);
  const timedOut = new Error(`timed out after ${timeout} ms`);
  timedOut.name = "TimeoutError";
  // `Infinity`: no timer; a longer wait than a timer holds is clamped (it would fire at once).
  const timer =
    timeout === undefined || timeout === Number.POSITIVE_INFINITY
      ? undefined
      : setTimeout(() => stop(timedOut), clampDelay(timeout));
  const stopped = new Promise<never>((_resolve, reject) => {
    controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
  });
  stopped.catch(() => undefined);
  try {
    const output: unknown = await Promise.race([
      Promise.resolve(handler(input, { ...context, signal: controller.signal })),
      stopped,
    ]);
    return { output: toJson(output), at: Date.now() };
  } catch (error) {
    if (isInstance(error, RetryableError)) throw error;
    const at = Date.now();
    if (controller.signal.reason === timedOut) return { timeout: timeout!, at };
    if (context.signal.aborted) return { aborted: true, at };
    if (isInstance(error, ApprovalPause)) return { pause: error.session, at };
    return { error: describeError(error), at };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    context.signal.removeEventListener("abort", onRunAbort);
  }
}

// The server refuses a journal entry over its message size limit, and the invocation then runs the
// step again, forever (a tool with side effects too): every kind of step must fit, error texts
// included. An answer too large becomes an error result; an error text too large is cut.
function fitStep(step: ToolStep, maxStepBytes: number): ToolStep {
  const bytes = Buffer.byteLength(JSON.stringify(step));
  if (bytes <= maxStepBytes) return step;
  if ("error" in step)
    return {
      error: fitText(step.error, maxStepBytes - (bytes - Buffer.byteLength(JSON.stringify(step.error)))),
      at: step.at,
    };
  const what = "output" in step ? "output" : "pause" in step ? "paused session" : "result";
  return fitStep(
    {
      error: `the tool's ${what} is too large to journal (${bytes} bytes, over maxStepBytes ${maxStepBytes})`,
      at: step.at,
    },
    maxStepBytes,
  );
}

// The loop stores outputs as JSON; the journal must hold exactly that.
function toJson(output: unknown): JsonValue {
  if (output === undefined) return "";
  const text = JSON.stringify(output);
  return text === undefined ? "" : (JSON.parse(text) as JsonValue);
}
