import { AgentError } from "./errors.ts";
import { notifySessionChange, type Message, type Session, type ToolCallMessage } from "./session.ts";

/** A human's answer to a tool call that waits for approval. */
export type ApprovalDecision = { approved: boolean; reason?: string };

/**
 * Records decisions on calls the run paused for (their `approval.status` is `pending`), in place;
 * returns the session. Then run the loop again: approved calls run, denied ones are answered
 * `"Rejected: <reason>"`, calls already answered are never run again, and the model is not called
 * again for that turn. Throws (changing nothing) for an unknown id, a call that is not waiting, or
 * a malformed decision.
 */
export function resolveApproval(
  session: Session,
  callId: string | readonly (string | ({ id: string } & ApprovalDecision))[],
  decision?: ApprovalDecision,
): Session {
  // One id, a list of ids sharing `decision`, or a list of `{ id, approved, reason? }`.
  const decisions = (typeof callId === "string" ? [callId] : callId).map((entry) =>
    typeof entry === "string" ? { id: entry, ...(decision as ApprovalDecision) } : entry,
  );
  const waiting = new Map(pendingApprovals(session).map((call) => [call.id, call]));
  // Check all first, so a bad entry in a list changes nothing.
  for (const entry of decisions) {
    if (typeof entry?.approved !== "boolean") {
      throw new AgentError(`resolveApproval: the decision for "${String(entry?.id)}" needs approved: true or false`);
    }
    if (entry.reason !== undefined && typeof entry.reason !== "string") throw new AgentError("resolveApproval: reason must be a string");
    if (!waiting.has(entry.id)) {
      const known = session.messages.some((message) => "type" in message && message.type === "tool_call" && message.id === entry.id);
      throw new AgentError(
        known ? `resolveApproval: tool call "${entry.id}" is not waiting for approval` : `resolveApproval: no tool call "${entry.id}" in this session`,
      );
    }
  }
  for (const entry of decisions) {
    const call = waiting.get(entry.id)!;
    const decided = entry.reason === undefined ? { status: entry.approved ? "approved" : "denied" } : { status: entry.approved ? "approved" : "denied", reason: entry.reason };
    // A nested call's decision lives inside its parent call's approval (keep `nested` if any).
    call.approval = { ...decided, ...(call.approval?.nested === undefined ? {} : { nested: call.approval.nested }) } as NonNullable<ToolCallMessage["approval"]>;
  }
  // Report the top-level calls that changed (a nested decision changes its parent call's record).
  for (let index = session.messages.length - 1; index >= 0; index--) {
    const message = session.messages[index]!;
    if ("role" in message && message.role !== "assistant") break;
    if ("type" in message && message.type === "tool_call" && message.approval !== undefined) {
      notifySessionChange(session, { type: "update", index, message, reason: "approval" });
    }
  }
  return session;
}

/**
 * The calls of the last turn waiting for a human's approval (the session is paused when there are
 * any), including those of subagents paused inside a call (`approval.nested`), whose decisions
 * `resolveApproval` records in place.
 */
export function pendingApprovals(session: Session): ToolCallMessage[] {
  const answered = new Set<string>();
  const pending: ToolCallMessage[] = [];
  for (let index = session.messages.length - 1; index >= 0; index--) {
    const message: Message = session.messages[index]!;
    if ("role" in message) {
      if (message.role !== "assistant") break;
      continue;
    }
    if (message.type === "tool_result") answered.add(message.id);
    else if (message.type === "tool_call" && message.approval?.status === "pending" && !answered.has(message.id)) {
      // A subagent paused inside this call: the decisions are about its calls.
      const nested = message.approval.nested;
      pending.unshift(...(nested === undefined ? [message] : pendingApprovals(nested)));
    }
  }
  return pending;
}
