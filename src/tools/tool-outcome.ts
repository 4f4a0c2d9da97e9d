import type { ConsultedLink, Session, ToolCallMessage, ToolResultMessage } from "../session.ts";

/** A call that may not run before a human approves it (see `resolveApproval`). */
export type PendingApproval = {
  type: "approval-pending";
  call: ToolCallMessage;
  /** Set when the handler itself paused (a subagent whose run paused): its session, to resume later. */
  nested?: Session;
  /** The links of the approval chain asked before the human that were not sure; kept on the waiting call. */
  consulted?: ConsultedLink[];
};

/** What running a call gives: its result, or a pause for approval. */
export type ToolOutcome = ToolResultMessage | PendingApproval;
