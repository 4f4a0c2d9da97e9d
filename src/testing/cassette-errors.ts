import { AgentError, isAgentError } from "../errors.ts";

/**
 * A replayed run asked the model something other than what was recorded (or more calls than were
 * recorded, or a recorded tool call with another input). `call` is the model call (from 1, in file
 * order) and `path` the first place that differs in the model's view (`messages[3].content`, the
 * system message included at index 0); `recorded` and `now` are the two values there.
 */
export class CassetteMismatchError extends AgentError {
  override name = "CassetteMismatchError";
  readonly call: number;
  readonly path: string;
  readonly recorded: unknown;
  readonly now: unknown;

  constructor(message: string, details: { call: number; path: string; recorded?: unknown; now?: unknown }) {
    super(message);
    this.call = details.call;
    this.path = details.path;
    this.recorded = details.recorded;
    this.now = details.now;
  }
}

export function isCassetteMismatchError(error: unknown): error is CassetteMismatchError {
  return isAgentError(error) && error.name === "CassetteMismatchError";
}

/**
 * Recording refused: a value shaped like an API key or bearer token was about to be written.
 * `where` names the place (`call 2 request messages[1].content`); the value itself is never repeated.
 * Nothing of the recording is written.
 */
export class CassetteSecretError extends AgentError {
  override name = "CassetteSecretError";
  readonly where: string;

  constructor(where: string, kind: string) {
    super(
      `cassette: refusing to record ${kind} found at ${where}; nothing was written (remove it, or return the entry without it from the cassette's redact option)`,
    );
    this.where = where;
  }
}

export function isCassetteSecretError(error: unknown): error is CassetteSecretError {
  return isAgentError(error) && error.name === "CassetteSecretError";
}

/** A cassette used wrongly: a missing file in replay, a malformed file, an unknown mode. */
export class CassetteError extends AgentError {
  override name = "CassetteError";
}

export function isCassetteError(error: unknown): error is CassetteError {
  return isAgentError(error) && error.name === "CassetteError";
}
