import { AgentError, isAgentError } from "../errors.ts";

/**
 * What went wrong, for code that reacts to it:
 * - `locked`: another writer has the session open;
 * - `malformed`: a line of the log cannot be read (`path` and `line` say which);
 * - `not-found`: no session there;
 * - `invalid-argument`: a bad id or entry;
 * - `not-open`: the session is not bound to a store;
 * - `write-failed`: an append or fsync failed, the session is no longer recorded;
 * - `modified`: the session was changed in a way an append-only log cannot record.
 */
export type StoreErrorCode =
  "locked" | "malformed" | "not-found" | "invalid-argument" | "not-open" | "write-failed" | "modified";

/** Thrown by `simple-agent-loop/store`. The message names the file (and line) concerned. */
export class StoreError extends AgentError {
  override name = "StoreError";
  readonly code: StoreErrorCode;
  /** The file concerned, when there is one. */
  readonly path: string | undefined;
  /** The 1-based line of the log, for `malformed`. */
  readonly line: number | undefined;

  constructor(message: string, details: { code: StoreErrorCode; path?: string; line?: number; cause?: unknown }) {
    super(message, { cause: details.cause });
    this.code = details.code;
    this.path = details.path;
    this.line = details.line;
  }
}

export function isStoreError(error: unknown): error is StoreError {
  return isAgentError(error) && error.name === "StoreError";
}
