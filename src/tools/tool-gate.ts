import { describeError } from "../errors.ts";
import type { ToolCallMessage, ToolResultMessage } from "../session.ts";
import { decisionHolds, pendingApprovals } from "./approval.ts";
import type { ExecutorSetup, ToolCallRun } from "./executor-setup.ts";
import type { ToolDefinition } from "./tool.ts";
import { abortedResult, beforeHookFailedResult, deniedResult, rejectedResult } from "./tool-errors.ts";

/** What the gate decided for a call: run it, wait for a human's approval, or answer it unrun. */
export type Gate =
  | { readonly type: "run" }
  | { readonly type: "pending" }
  | { readonly type: "answered"; readonly result: ToolResultMessage };

/** The gate of a call with nothing to check (see `isGated`). */
export const openGate: Gate = { type: "run" };
const pendingGate: Gate = { type: "pending" };

/**
 * Whether the call has anything for the gate to check: an approval state, a tool that requires
 * approval, or a `beforeToolCall` hook. Most calls have none, and skip the gate's await.
 */
export function isGated(call: ToolCallMessage, definition: ToolDefinition | undefined, setup: ExecutorSetup): boolean {
  return (
    call.approval !== undefined || setup.hooks?.beforeToolCall !== undefined || definition?.requireApproval === true
  );
}

/**
 * Decides whether a call may run. A decision recorded on the call wins (`resolveApproval`); then
 * the tool's `requireApproval` and the `beforeToolCall` hook, which may deny the call or ask for
 * approval. A hook that throws denies the call (fail closed) and is reported as `hook-error`.
 */
export async function checkGate(
  { call, setup, signal, abortRace }: ToolCallRun,
  definition: ToolDefinition | undefined,
): Promise<Gate> {
  const decision = call.approval?.status;
  if (decision === "pending") return resumeGate(call);
  // A decision taken for another input (edited since) is none: the call asks again, showing what it
  // says now. So is an approval that does not say what it was for; a denial without that still denies.
  const unbound = call.approval?.input === undefined;
  if ((decision === "approved" || (decision === "denied" && !unbound)) && !decisionHolds(call)) return pendingGate;
  if (decision === "denied") return { type: "answered", result: rejectedResult(call, call.approval?.reason) };
  let needsApproval = decision !== "approved" && definition?.requireApproval === true;
  const hook = setup.hooks?.beforeToolCall;
  if (hook !== undefined && !signal.aborted) {
    try {
      const verdict = await abortRace.race(Promise.resolve(hook({ call, session: setup.session })));
      if (verdict !== undefined && "deny" in verdict)
        return { type: "answered", result: deniedResult(call, verdict.deny) };
      if (verdict !== undefined && verdict.requireApproval === true && decision !== "approved") needsApproval = true;
    } catch (error) {
      if (signal.aborted) return { type: "answered", result: abortedResult(call) };
      setup.onEvent?.({ type: "hook-error", hook: "beforeToolCall", id: call.id, error: describeError(error) });
      return { type: "answered", result: beforeHookFailedResult(call, error) };
    }
  }
  return needsApproval ? pendingGate : openGate;
}

// Still undecided, unless the call waits only for a paused subagent whose own calls are all
// decided now: then it runs, to resume that subagent.
function resumeGate(call: ToolCallMessage): Gate {
  const nested = call.approval?.nested;
  return nested !== undefined && pendingApprovals(nested).every((inner) => inner.approval?.status !== "pending")
    ? openGate
    : pendingGate;
}
