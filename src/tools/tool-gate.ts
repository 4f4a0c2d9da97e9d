import { describeError } from "../errors.ts";
import type { ConsultedLink, ToolCallMessage, ToolResultMessage } from "../session.ts";
import { decisionHolds, pendingApprovals } from "./approval.ts";
import type { ExecutorSetup, ToolCallRun } from "./executor-setup.ts";
import type { ToolDefinition } from "./tool.ts";
import { recordDecision, ruleLink, runApprovalChain } from "./approval-chain.ts";
import { isOwnTool } from "./approval-setup.ts";
import { recordEarlierSpending } from "./approval-spending.ts";
import { abortedResult, beforeHookFailedResult, deniedResult, denialResult } from "./tool-errors.ts";

/** What the gate decided for a call: run it, wait for a human's approval, or answer it unrun. */
export type Gate =
  | { readonly type: "run" }
  | { readonly type: "pending"; readonly consulted?: ConsultedLink[] }
  | { readonly type: "answered"; readonly result: ToolResultMessage };

/** The gate of a call with nothing to check (see `isGated`). */
export const openGate: Gate = { type: "run" };
const pendingGate: Gate = { type: "pending" };

/**
 * Whether the call has anything for the gate to check: an approval state, a tool that requires
 * approval, a `beforeToolCall` hook, or an approval policy. Most calls have none, and skip the gate's await.
 */
export function isGated(call: ToolCallMessage, definition: ToolDefinition | undefined, setup: ExecutorSetup): boolean {
  return (
    call.approval !== undefined ||
    setup.hooks?.beforeToolCall !== undefined ||
    definition?.requireApproval === true ||
    setup.approvals !== undefined
  );
}

/**
 * Decides whether a call may run. A decision recorded on the call for its input as it is now
 * holds (a resumed call that was decided and did not run runs without asking again, unless a
 * deny rule of this run's policy matches it); a decision
 * for another input (edited since) is dropped, and the call goes through the whole chain again.
 * A call still waiting for a human (`pending`) keeps waiting, unless this run's policy has a human
 * who decides now (an `AskHuman`, or `"deny"`): then it goes through the hook and the chain,
 * keeping the links consulted before (a classifier that was unsure is not asked again; a rule that
 * asked for a human still does, whatever allows it now).
 * Then the `beforeToolCall` hook, which may deny the call (recorded `{ by: "hook" }` under a
 * policy) or ask for a human; then the approval chain (`runApprovalChain`). A hook that throws
 * denies the call (fail closed) and is reported as `hook-error`.
 */
export async function checkGate(run: ToolCallRun, definition: ToolDefinition | undefined): Promise<Gate> {
  const { call, setup, signal, abortRace } = run;
  const decision = call.approval?.status;
  if (decision === "pending" && !decidedNow(call, setup)) return resumeGate(call);
  // A call that waited for a human goes on from what was asked then (no classifier asked twice).
  const earlier = decision === "pending" ? (call.approval?.consulted ?? []) : undefined;
  // A denial without the input it was for still denies; an approval without it does not hold.
  const holds =
    decision === "pending"
      ? false
      : decision === "denied"
        ? call.approval?.input === undefined || decisionHolds(call)
        : decisionHolds(call);
  // Decided in an earlier run: what its classifiers spent then goes on this run's result (asked again or not).
  if (decision !== undefined) recordEarlierSpending(setup, call);
  if (decision !== undefined && !holds) delete call.approval;
  else if (decision === "denied") return { type: "answered", result: denialResult(call) };
  const decided = decision === "approved" && holds;
  let askedByHook = false;
  const hook = setup.hooks?.beforeToolCall;
  if (hook !== undefined && !signal.aborted) {
    try {
      const verdict = await abortRace.race(
        Promise.resolve(
          hook(
            run.caller === undefined
              ? { call, session: setup.session }
              : { call, session: setup.session, caller: run.caller },
          ),
        ),
      );
      if (verdict !== undefined && "deny" in verdict) {
        if (setup.approvals !== undefined) recordDecision(run, "denied", { by: "hook", reason: verdict.deny }, []);
        return { type: "answered", result: deniedResult(call, verdict.deny) };
      }
      if (verdict !== undefined && verdict.requireApproval === true) askedByHook = true;
    } catch (error) {
      if (signal.aborted) return { type: "answered", result: abortedResult(call) };
      setup.onEvent?.({ type: "hook-error", hook: "beforeToolCall", id: call.id, error: describeError(error) });
      return { type: "answered", result: beforeHookFailedResult(call, error) };
    }
  }
  if (decided) return deniedByRule(run, definition) ?? openGate;
  const outcome = await runApprovalChain(run, definition, askedByHook, earlier);
  switch (outcome.type) {
    case "approved":
      return openGate;
    case "denied":
      return { type: "answered", result: denialResult(call) };
    case "aborted":
      return { type: "answered", result: abortedResult(call) };
    case "pending":
      return outcome.consulted.length === 0 ? pendingGate : { type: "pending", consulted: outcome.consulted };
  }
}

// A decision taken earlier (a human's, a page's, a stored session's) never outweighs a deny rule of
// the policy the call runs under now: the policy may have changed, the record may have been edited.
function deniedByRule(run: ToolCallRun, definition: ToolDefinition | undefined): Gate | undefined {
  const { call, setup } = run;
  const own = definition !== undefined && isOwnTool(definition);
  const match = setup.approvals?.rules.match(call.name, call.input, own);
  if (match?.action !== "deny") return undefined;
  recordDecision(run, "denied", ruleLink(match), []);
  return { type: "answered", result: denialResult(call) };
}

// A call a paused run left waiting is decided in a run whose policy has a human to ask inline (a
// function: the CLI's prompt) or none (`"deny"`); under `"pause"` (or no policy) it keeps waiting
// for `resolveApproval`. A call waiting for a paused subagent resumes that subagent, whose own
// calls are decided there.
function decidedNow(call: ToolCallMessage, setup: ExecutorSetup): boolean {
  const human = setup.approvals?.human;
  return human !== undefined && human !== "pause" && call.approval?.nested === undefined;
}

// Still undecided, unless the call waits only for a paused subagent whose own calls are all
// decided now: then it runs, to resume that subagent.
function resumeGate(call: ToolCallMessage): Gate {
  const nested = call.approval?.nested;
  return nested !== undefined && pendingApprovals(nested).every((inner) => inner.approval?.status !== "pending")
    ? openGate
    : pendingGate;
}
