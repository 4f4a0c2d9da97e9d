import type { AbortRace } from "../loop/abort.ts";
import { describeError } from "../errors.ts";
import { roundMs } from "../numeric-options.ts";
import type { ToolCallMessage, ToolResultMessage } from "../session.ts";
import type { ExecutorSetup } from "./executor-setup.ts";
import { invokeTool, type Eventually } from "./invoke-tool.ts";
import { toJsonOutput } from "./json-output.ts";
import { contentResult, isToolContent } from "./tool-content.ts";
import { checkGate, isGated } from "./tool-gate.ts";
import type { ToolDefinition } from "./tool.ts";
import type { PendingApproval, ToolOutcome } from "./tool-outcome.ts";
import { afterHookFailedResult, notLoadedResult, thrownResult } from "./tool-errors.ts";
import { searchToolsName } from "./search-tools.ts";

/**
 * One call through its phases: the gate (approval, `beforeToolCall`), the handler (`invokeTool`),
 * then the `afterToolCall` hook and the `tool-execution-end` event. Gives the call's result or a
 * pause for approval, itself when nothing was awaited, else as one promise that never rejects: a
 * call without gate or hook goes through no async frame of its own.
 */
export function runToolCall(
  call: ToolCallMessage,
  setup: ExecutorSetup,
  signal: AbortSignal,
  abortRace: AbortRace,
): Eventually<ToolOutcome> {
  // It already ran while an earlier call waited for approval: never run it again.
  if (call.heldResult !== undefined) return { type: "tool_result", id: call.id, ...call.heldResult };
  // Every call is answered: whatever escapes the phases (a thrown value whose very inspection
  // throws) becomes the call's error result instead of leaving it unanswered.
  try {
    const definition = setup.definitions.get(call.name);
    // A deferred tool the model has not loaded is never run, not even asked about.
    if (definition?.deferred === true && setup.offer?.callable(setup.session, call.name, call.id) === false)
      return notLoadedResult(call, searchToolsName);
    if (isGated(call, definition, setup)) return gatedCall(call, definition, setup, signal, abortRace);
    return runPastGate(call, definition, setup, signal, abortRace, undefined, 0);
  } catch (error) {
    return thrownResult(call, error);
  }
}

async function gatedCall(
  call: ToolCallMessage,
  definition: ToolDefinition | undefined,
  setup: ExecutorSetup,
  signal: AbortSignal,
  abortRace: AbortRace,
): Promise<ToolOutcome> {
  try {
    const waitStart = performance.now();
    const gate = await checkGate(call, definition, setup, signal, abortRace);
    // Time in the gate is waiting (a hook asking the user), not running: measured apart.
    const waitMs = performance.now() - waitStart;
    if (gate.type === "pending") return approvalRequested(setup, { type: "approval-pending", call });
    return await runPastGate(
      call,
      definition,
      setup,
      signal,
      abortRace,
      gate.type === "answered" ? gate.result : undefined,
      waitMs,
    );
  } catch (error) {
    return thrownResult(call, error);
  }
}

// The call passed the gate: `tool-execution-start`, the handler (unless the gate `answered` it), the end.
function runPastGate(
  call: ToolCallMessage,
  definition: ToolDefinition | undefined,
  setup: ExecutorSetup,
  signal: AbortSignal,
  abortRace: AbortRace,
  answered: ToolResultMessage | undefined,
  waitMs: number,
): Eventually<ToolOutcome> {
  setup.onEvent?.({ type: "tool-execution-start", id: call.id, name: call.name, input: call.input });
  // Nothing to do after the handler (no listener, no hook, no wait to record): its outcome is
  // the call's, without a `then` of its own (`invokeTool` never rejects).
  if (
    answered === undefined &&
    waitMs === 0 &&
    setup.onEvent === undefined &&
    setup.hooks?.afterToolCall === undefined
  ) {
    return invokeTool(call, definition, setup, signal, abortRace);
  }
  // Only a listener hears the duration: without one (and no wait to record) no clock is read.
  const timing: Timing = setup.onEvent === undefined && waitMs === 0 ? untimed : { started: performance.now(), waitMs };
  const outcome = answered ?? invokeTool(call, definition, setup, signal, abortRace);
  if (!(outcome instanceof Promise)) return finishCall(call, outcome, setup, abortRace, timing);
  return outcome.then(
    (settled) => finishCall(call, settled, setup, abortRace, timing),
    (error: unknown) => thrownResult(call, error),
  );
}

/** When the handler started, and how long the gate waited before it. */
type Timing = { readonly started: number; readonly waitMs: number };

const untimed: Timing = { started: 0, waitMs: 0 };

function finishCall(
  call: ToolCallMessage,
  outcome: ToolOutcome,
  setup: ExecutorSetup,
  abortRace: AbortRace,
  timing: Timing,
): Eventually<ToolOutcome> {
  try {
    if (outcome.type === "approval-pending") return approvalRequested(setup, outcome);
    const after = setup.hooks?.afterToolCall;
    if (after === undefined) return ended(call, outcome, setup, timing);
    return afterToolCall(after, call, outcome, setup, abortRace).then(
      (result) => ended(call, result, setup, timing),
      (error: unknown) => thrownResult(call, error),
    );
  } catch (error) {
    return thrownResult(call, error);
  }
}

function ended(
  call: ToolCallMessage,
  result: ToolResultMessage,
  setup: ExecutorSetup,
  { started, waitMs }: Timing,
): ToolResultMessage {
  try {
    if (waitMs >= 1) result.waitMs = Math.round(waitMs);
    setup.onEvent?.({
      type: "tool-execution-end",
      id: call.id,
      name: call.name,
      result,
      durationMs: roundMs(performance.now() - started),
      waitMs: roundMs(waitMs),
    });
    return result;
  } catch (error) {
    return thrownResult(call, error);
  }
}

function approvalRequested(setup: ExecutorSetup, pending: PendingApproval): PendingApproval {
  const { call } = pending;
  setup.onEvent?.({ type: "tool-approval-request", id: call.id, name: call.name, input: call.input });
  return pending;
}

type AfterToolCall = NonNullable<NonNullable<ExecutorSetup["hooks"]>["afterToolCall"]>;

// The hook may replace the result: `{ output, isError? }`, or the new output itself. A hook that
// throws replaces it with an error (fail closed), reported as `hook-error`.
async function afterToolCall(
  hook: AfterToolCall,
  call: ToolCallMessage,
  result: ToolResultMessage,
  setup: ExecutorSetup,
  abortRace: AbortRace,
): Promise<ToolResultMessage> {
  try {
    const replaced = await abortRace.race(Promise.resolve(hook({ call, result, session: setup.session })));
    if (replaced === undefined) return result;
    if (isToolContent(replaced)) return contentResult(call.id, replaced);
    const shaped =
      typeof replaced === "object" && replaced !== null && !Array.isArray(replaced) && "output" in replaced;
    const next: ToolResultMessage = {
      type: "tool_result",
      id: call.id,
      output: toJsonOutput(shaped ? replaced.output : replaced),
    };
    if (shaped && replaced.isError === true) next.isError = true;
    return next;
  } catch (error) {
    setup.onEvent?.({ type: "hook-error", hook: "afterToolCall", id: call.id, error: describeError(error) });
    return afterHookFailedResult(call, error);
  }
}
