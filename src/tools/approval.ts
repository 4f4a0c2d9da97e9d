import { AgentError, describeValue } from "../errors.ts";
import {
  isToolCall,
  notifySessionChange,
  now,
  type DecidedBy,
  type JsonObject,
  type Session,
  type ToolCallMessage,
} from "../session.ts";
import { turnBefore, unansweredCalls } from "../session-turns.ts";
import { sameJson } from "./same-json.ts";

/**
 * A human's answer to a tool call that waits for approval. `by`: the human's id, recorded as
 * `approval.decidedBy.user`.
 */
export type ApprovalDecision = { approved: boolean; reason?: string; by?: string };

/**
 * A call waiting for approval and its path: its id for a call of the session itself; for a call
 * of a subagent paused inside a call, the ids from the outer call down, joined by `/`
 * (`"call_7/call_1"`). Paths are unique where ids need not be: two subagents' models may both
 * name their first call `call_1`.
 */
export type PendingApprovalEntry = { path: string; call: ToolCallMessage };

/**
 * Records decisions on calls the run paused for (their `approval.status` is `pending`), in place;
 * returns the session. Then run the loop again: approved calls run, denied ones are answered
 * `"Rejected: <reason>"`, calls already answered are never run again, and the model is not called
 * again for that turn.
 *
 * A decision names exactly one waiting call, by its id or its path (see `pendingApprovalEntries`):
 * an id two waiting calls share is refused as ambiguous (name the call by its path, or decide the
 * other first). Throws (changing nothing) for an unknown id, a call that is not waiting, an
 * ambiguous name, two decisions for one call in one request, or a malformed decision.
 */
export function resolveApproval(
  session: Session,
  callId: string | readonly (string | ({ id: string } & ApprovalDecision))[],
  decision?: ApprovalDecision,
): Session {
  // One id, a list of ids sharing `decision`, or a list of `{ id, approved, reason? }`.
  const decisions = (typeof callId === "string" ? [callId] : callId).map((entry) =>
    typeof entry === "string" ? { id: entry, ...decision } : entry,
  );
  const waiting = pendingApprovalEntries(session).map((entry) => ({ ...entry, id: entry.call.id }));
  const chosen = new Map<ToolCallMessage, ApprovalDecision>();
  // Check all first, so a bad entry in a list changes nothing.
  for (const entry of decisions) {
    if (typeof entry?.id !== "string")
      throw new AgentError("resolveApproval: a decision needs the tool call's id (a string)");
    if (typeof entry.approved !== "boolean") {
      throw new AgentError(`resolveApproval: the decision for "${entry.id}" needs approved: true or false`);
    }
    if (entry.reason !== undefined && typeof entry.reason !== "string")
      throw new AgentError("resolveApproval: reason must be a string");
    if (entry.by !== undefined && typeof entry.by !== "string")
      throw new AgentError(
        `resolveApproval: by (the id of who decided) must be a string; got ${describeValue(entry.by)}`,
      );
    const found = findPendingCall(waiting, entry.id);
    if (found.type === "ambiguous") {
      throw new AgentError(
        `resolveApproval: "${entry.id}" names ${found.paths.length} waiting calls (${found.paths.join(", ")}); name one by its path`,
      );
    }
    if (found.type === "none") {
      const known = session.messages.some(
        (message) => "type" in message && message.type === "tool_call" && message.id === entry.id,
      );
      throw new AgentError(
        known
          ? `resolveApproval: tool call "${entry.id}" is not waiting for approval`
          : `resolveApproval: no tool call "${entry.id}" in this session`,
      );
    }
    if (chosen.has(found.entry.call))
      throw new AgentError(`resolveApproval: tool call "${found.entry.path}" is decided twice in one request`);
    chosen.set(found.entry.call, decisionOf({ ...entry, approved: entry.approved }));
  }
  applyDecisions(session, chosen, now());
  return session;
}

/**
 * Records decisions taken by exact path (a durable run's, already checked as they arrived).
 * Throws, changing nothing, for a path that is not waiting.
 */
export function recordDecisions(
  session: Session,
  decisions: readonly ({ path: string } & ApprovalDecision)[],
  at: string = now(),
): void {
  const waiting = new Map(pendingApprovalEntries(session).map((entry) => [entry.path, entry.call]));
  const chosen = new Map<ToolCallMessage, ApprovalDecision>();
  for (const decision of decisions) {
    const call = waiting.get(decision.path);
    if (call === undefined) throw new AgentError(`tool call "${decision.path}" is not waiting for approval`);
    chosen.set(call, decisionOf(decision));
  }
  applyDecisions(session, chosen, at);
}

function decisionOf({ approved, reason, by }: ApprovalDecision): ApprovalDecision {
  const decision: ApprovalDecision = { approved };
  if (reason !== undefined) decision.reason = reason;
  if (by !== undefined) decision.by = by;
  return decision;
}

/** Which waiting call `key` names: the one whose path or id it is; several: ambiguous. */
export function findPendingCall<Entry extends { path: string; id: string }>(
  waiting: readonly Entry[],
  key: string,
): { type: "found"; entry: Entry } | { type: "ambiguous"; paths: string[] } | { type: "none" } {
  const matches = waiting.filter((entry) => entry.path === key || entry.id === key);
  if (matches.length === 1) return { type: "found", entry: matches[0]! };
  return matches.length === 0 ? { type: "none" } : { type: "ambiguous", paths: matches.map((entry) => entry.path) };
}

/**
 * The calls of the last turn waiting for a human's approval (the session is paused when there are
 * any), including those of subagents paused inside a call (`approval.nested`), whose decisions
 * `resolveApproval` records in place.
 */
export function pendingApprovals(session: Session): ToolCallMessage[] {
  return pendingApprovalEntries(session).map((entry) => entry.call);
}

/** `pendingApprovals` with each call's path, the name that is unique among them (see `PendingApprovalEntry`). */
export function pendingApprovalEntries(session: Session): PendingApprovalEntry[] {
  return entriesUnder(session, "");
}

// Only the last model turn can wait: the loop pauses with it and answers it before the model speaks again.
function entriesUnder(session: Session, prefix: string): PendingApprovalEntry[] {
  const { messages } = session;
  const turn = turnBefore(messages, messages.length);
  const pending: PendingApprovalEntry[] = [];
  if (turn === undefined) return pending;
  for (const call of unansweredCalls(messages, turn)) {
    if (call.approval?.status !== "pending") continue;
    // A subagent paused inside this call: the decisions are about its calls.
    const nested = call.approval.nested;
    const path = `${prefix}${call.id}`;
    pending.push(...(nested === undefined ? [{ path, call }] : entriesUnder(nested, `${path}/`)));
  }
  return pending;
}

function applyDecisions(session: Session, chosen: ReadonlyMap<ToolCallMessage, ApprovalDecision>, at: string): void {
  for (const [call, { approved, reason, by }] of chosen) {
    const status = approved ? "approved" : "denied";
    // A nested call's decision lives inside its parent call's approval (keep `nested` if any), as
    // do the links of the chain asked before the human.
    const { nested, consulted } = call.approval ?? {};
    const decidedBy: DecidedBy = { by: "human" };
    if (by !== undefined) decidedBy.user = by;
    if (reason !== undefined) decidedBy.reason = reason;
    // The decision is for the input the human saw: a copy of it, so a later edit cannot change it too.
    call.approval = {
      status,
      ...(reason === undefined ? {} : { reason }),
      ...(nested === undefined ? {} : { nested }),
      input: JSON.parse(JSON.stringify(call.input)) as JsonObject,
      decidedBy,
      ...(consulted === undefined ? {} : { consulted }),
      at,
    };
  }
  // Report the top-level calls that changed (a nested decision changes its parent call's record).
  const turn = turnBefore(session.messages, session.messages.length);
  if (turn?.type !== "model") return;
  for (let index = turn.results - 1; index >= turn.start; index--) {
    const message = session.messages[index]!;
    if (isToolCall(message) && message.approval !== undefined)
      notifySessionChange(session, { type: "update", index, message, reason: "approval" });
  }
}

/**
 * Whether a recorded decision still applies to its call: it was taken for the input the call has
 * now (`approval.input`, compared as JSON). A decision without that copy, or for another input, does not.
 */
export function decisionHolds(call: ToolCallMessage): boolean {
  const given = call.approval?.input;
  return given !== undefined && sameJson(given, call.input);
}
