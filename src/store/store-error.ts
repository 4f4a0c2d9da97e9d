import { AgentError, isAgentError } from "../errors.ts";

/**
 * What went wrong, for code that reacts to it:
 * - `locked`: another writer has the session open, or this writer lost its lease to another one
 *   (thrown as a `SessionLockedError`);
 * - `malformed`: a line of the log cannot be read (`path` and `line` say which);
 * - `not-found`: no session there;
 * - `invalid-argument`: a bad id or entry;
 * - `not-open`: the session is not bound to a store;
 * - `write-failed`: an append or fsync failed, the session is no longer recorded;
 * - `modified`: the session was changed in a way an append-only log cannot record;
 * - `unavailable`: the database cannot be reached (`retryable` when trying again later may work).
 */
export type StoreErrorCode =
  "locked" | "malformed" | "not-found" | "invalid-argument" | "not-open" | "write-failed" | "modified" | "unavailable";

/** Thrown by `simple-agent-loop/store`. The message names the file or session (and line) concerned. */
export class StoreError extends AgentError {
  override name = "StoreError";
  readonly code: StoreErrorCode;
  /** The file concerned, when there is one. */
  readonly path: string | undefined;
  /** The 1-based line of the log, for `malformed`. */
  readonly line: number | undefined;

  constructor(
    message: string,
    details: { code: StoreErrorCode; path?: string; line?: number; cause?: unknown; retryable?: boolean },
  ) {
    super(message, { cause: details.cause, retryable: details.retryable ?? false });
    this.code = details.code;
    this.path = details.path;
    this.line = details.line;
  }
}

export function isStoreError(error: unknown): error is StoreError {
  return isAgentError(error) && (error.name === "StoreError" || error.name === "SessionLockedError");
}

/**
 * Thrown (with `code: "locked"`) when another writer has the session: a second `open` while the
 * first writer holds it, or a write by a writer whose lease another one took over after it
 * expired (that write is refused, never interleaved). `owner` names the holder where the store
 * knows it (a database lease's owner, a lock file's process), `expiresAt` when its lease ends
 * unless renewed (database stores).
 */
export class SessionLockedError extends StoreError {
  override name = "SessionLockedError";
  readonly owner: string | undefined;
  readonly expiresAt: string | undefined;

  constructor(message: string, details: { path?: string; owner?: string; expiresAt?: string; cause?: unknown }) {
    super(message, { ...details, code: "locked" });
    this.owner = details.owner;
    this.expiresAt = details.expiresAt;
  }
}

export function isSessionLockedError(error: unknown): error is SessionLockedError {
  return isAgentError(error) && error.name === "SessionLockedError";
}
