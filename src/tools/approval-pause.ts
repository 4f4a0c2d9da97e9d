import { isInstance } from "../errors.ts";
import type { Session } from "../session.ts";

/**
 * Thrown by a handler whose work paused for a human's approval (a subagent whose own run paused):
 * the call waits too, keeping `session`, and on resume the handler gets it back as `context.resume`.
 */
export class ApprovalPause extends Error {
  override name = "ApprovalPause";
  readonly session: Session;

  constructor(session: Session) {
    super("paused for approval");
    this.session = session;
  }
}

/** Works across duplicate copies of this package, as the error guards in errors.ts do. */
export function isApprovalPause(error: unknown): error is ApprovalPause {
  return isInstance(error, ApprovalPause);
}
