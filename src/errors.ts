import type { Session } from "./session.ts";

// Guards check a brand, not `instanceof`, so they work across duplicate copies of this package
// (two versions in one node_modules tree, or an ESM and a bundled copy).
const brand = Symbol.for("simple-agent-loop.error");

/** Base class of every error this library throws. `retryable` says whether repeating the same call may succeed. */
export class AgentError extends Error {
  override name = "AgentError";
  readonly retryable: boolean;
  readonly [brand] = true;

  constructor(message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryable = options.retryable ?? false;
  }
}

export function isAgentError(error: unknown): error is AgentError {
  return typeof error === "object" && error !== null && (error as { [brand]?: unknown })[brand] === true;
}

/**
 * Thrown by the loop when `maxIterations` model calls were made and the model still wanted to
 * continue. `session` holds all the work done: every tool call of the last turn has its result,
 * so the session can be continued by calling the loop again.
 */
export class MaxIterationsError extends AgentError {
  override name = "MaxIterationsError";
  readonly maxIterations: number;
  readonly session: Session;

  constructor(message: string, details: { maxIterations: number; session: Session }) {
    super(message);
    this.maxIterations = details.maxIterations;
    this.session = details.session;
  }
}

export function isMaxIterationsError(error: unknown): error is MaxIterationsError {
  return isAgentError(error) && error.name === "MaxIterationsError";
}

/**
 * Thrown when `invokeModel` returns something the loop cannot use (not messages, a tool call
 * without an id, duplicate ids). The session is left as it was before that model call.
 */
export class InvalidModelResponseError extends AgentError {
  override name = "InvalidModelResponseError";
}

export function isInvalidModelResponseError(error: unknown): error is InvalidModelResponseError {
  return isAgentError(error) && error.name === "InvalidModelResponseError";
}

/** An abort reason of our own when the caller aborted without one. */
export class AbortError extends AgentError {
  override name = "AbortError";
  constructor(message = "The operation was aborted") {
    super(message);
  }
}

/** True for any abort: ours, the platform's `AbortError` DOMException, or a `TimeoutError` from `AbortSignal.timeout`. */
export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError");
}

/** The message of anything thrown, without `Error:` prefixes or stack. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
