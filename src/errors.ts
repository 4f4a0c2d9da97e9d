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
/** The class name of a thrown `Error` (`error.name`), for telemetry; undefined for anything else. */
export function errorType(error: unknown): string | undefined {
  return error instanceof Error ? error.name : undefined;
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/**
 * A model provider refused or failed a request. `status` is the HTTP status (absent for network
 * failures), `retryable` says whether the loop may repeat the call, `retryAfterMs` is the wait the
 * provider asked for. The message is the provider's own; it never contains the API key.
 */
export class ProviderError extends AgentError {
  override name = "ProviderError";
  readonly provider: string;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly requestId: string | undefined;
  /** The provider's error type or code, e.g. `overloaded_error`, `context_length_exceeded`. */
  readonly code: string | undefined;

  constructor(
    message: string,
    details: {
      provider: string;
      status?: number;
      retryable?: boolean;
      retryAfterMs?: number;
      requestId?: string;
      code?: string;
      cause?: unknown;
    },
  ) {
    super(message, { retryable: details.retryable ?? false, cause: details.cause });
    this.provider = details.provider;
    this.status = details.status;
    this.retryAfterMs = details.retryAfterMs;
    this.requestId = details.requestId;
    this.code = details.code;
  }
}

export function isProviderError(error: unknown): error is ProviderError {
  return isAgentError(error) && (error.name === "ProviderError" || error.name === "ContextOverflowError");
}

/** The request does not fit the model's context window. Not retryable as is: compact first. */
export class ContextOverflowError extends ProviderError {
  override name = "ContextOverflowError";
  /** Distinguishes the type from `ProviderError`, so guards can narrow between the two. */
  readonly contextOverflow = true;
}

export function isContextOverflowError(error: unknown): error is ContextOverflowError {
  return isAgentError(error) && error.name === "ContextOverflowError";
}

/** True for an error that says repeating the same call may succeed (`retryable: true`). */
export function isRetryable(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { retryable?: unknown }).retryable === true;
}
