import type { AbortRace } from "../loop/abort.ts";
import { describeError } from "../errors.ts";
import { roundMs } from "../numeric-options.ts";
import type { ToolCallMessage, ToolResultMessage } from "../session.ts";
import type { ExecutorSetup } from "./executor-setup.ts";
import { invokeTool } from "./invoke-tool.ts";
import { toJsonOutput } from "./json-output.ts";
import { checkGate, isGated, openGate } from "./tool-gate.ts";
import type { PendingApproval, ToolOutcome } from "./tool-outcome.ts";
import { afterHookFailedResult, thrownResult } from "./tool-errors.ts";

/**
 * One call through its phases: the gate (approval, `beforeToolCall`), the handler (`invokeTool`),
 * then the `afterToolCall` hook and the `tool-execution-end` event. Resolves with the call's result
 * or a pause for approval; never rejects.
 */
export async function runToolCall(call: ToolCallMessage, setup: ExecutorSetup, signal: AbortSignal, abortRace: AbortRace): Promise<ToolOutcome> {
  // It already ran while an earlier call waited for approval: never run it again.
  if (call.heldResult !== undefined) return { type: "tool_result", id: call.id, ...call.heldResult };
  // Every call is answered: whatever escapes the phases (a thrown value whose very inspection
  // throws) becomes the call's error result instead of leaving it unanswered.
  try {
    const definition = setup.definitions.get(call.name);
    const gated = isGated(call, definition, setup);
    const waitStart = gated ? performance.now() : 0;
    const gate = gated ? await checkGate(call, definition, setup, signal, abortRace) : openGate;
    // Time in the gate is waiting (a hook asking the user), not running: measured apart.
    const waitMs = gated ? performance.now() - waitStart : 0;
    if (gate.type === "pending") return approvalRequested(setup, { type: "approval-pending", call });
    setup.onEvent?.({ type: "tool-execution-start", id: call.id, name: call.name, input: call.input });
    const runStart = performance.now();
    const outcome = gate.type === "run" ? await invokeTool(call, definition, setup, signal, abortRace) : gate.result;
    if (outcome.type === "approval-pending") return approvalRequested(setup, outcome);
    const after = setup.hooks?.afterToolCall;
    const result = after === undefined ? outcome : await afterToolCall(after, call, outcome, setup, abortRace);
    if (waitMs >= 1) result.waitMs = Math.round(waitMs);
    setup.onEvent?.({ type: "tool-execution-end", id: call.id, name: call.name, result, durationMs: roundMs(performance.now() - runStart), waitMs: roundMs(waitMs) });
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
    const shaped = typeof replaced === "object" && replaced !== null && !Array.isArray(replaced) && "output" in replaced;
    const next: ToolResultMessage = { type: "tool_result", id: call.id, output: toJsonOutput(shaped ? replaced.output : replaced) };
    if (shaped && replaced.isError === true) next.isError = true;
    return next;
  } catch (error) {
    setup.onEvent?.({ type: "hook-error", hook: "afterToolCall", id: call.id, error: describeError(error) });
    return afterHookFailedResult(call, error);
  }
}
