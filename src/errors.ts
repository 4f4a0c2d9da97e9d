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

const beforeSending = Symbol.for("simple-agent-loop.before-sending");

/**
 * Marks `error` (and returns it) as raised by a model before anything was sent to its provider: a
 * missing API key, an invalid setting, a request that cannot be built. Such an error says nothing
 * of the model's answer, so a cassette does not record it (a recording of it would replay the
 * missing key forever, once the key is set). Every adapter marks what it throws before sending.
 */
export function markRaisedBeforeSending<T>(error: T): T {
  if (typeof error === "object" && error !== null && Object.isExtensible(error))
    Object.defineProperty(error, beforeSending, { value: true, enumerable: false, configurable: true });
  return error;
}

/** Whether `error` was raised before anything was sent (`markRaisedBeforeSending`). Never throws. */
export function isRaisedBeforeSending(error: unknown): boolean {
  try {
    return (
      typeof error === "object" && error !== null && (error as { [beforeSending]?: unknown })[beforeSending] === true
    );
  } catch {
    return false;
  }
}

/** Never throws, whatever was thrown (a revoked proxy is simply not an `AgentError`); so do the other guards. */
export function isAgentError(error: unknown): error is AgentError {
  try {
    return typeof error === "object" && error !== null && (error as { [brand]?: unknown })[brand] === true;
  } catch {
    return false;
  }
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

/** Thrown when the model's final answer is still not valid after the allowed attempts; `text` is its last answer. */
export class StructuredOutputError extends AgentError {
  override name = "StructuredOutputError";
  readonly text: string;
  readonly problems: string;

  constructor(message: string, details: { text: string; problems: string }) {
    super(message);
    this.text = details.text;
    this.problems = details.problems;
  }
}

export function isStructuredOutputError(error: unknown): error is StructuredOutputError {
  return errorType(error) === "StructuredOutputError";
}

/** An abort reason of our own when the caller aborted without one. */
export class AbortError extends AgentError {
  override name = "AbortError";
  constructor(message = "The operation was aborted") {
    super(message);
  }
}

/**
 * True for any abort: ours, the platform's `AbortError` DOMException, or a `TimeoutError` from
 * `AbortSignal.timeout`. Our own `TimeoutError` (a time limit of the loop) is not an abort: it is
 * a retryable failure of the attempt it ended.
 */
export function isAbortError(error: unknown): boolean {
  const type = errorType(error);
  return type === "AbortError" || (type === "TimeoutError" && !isAgentError(error));
}

/**
 * A time limit of the loop ran out (`timeouts`): `limit` names it (`modelCallMs`, `firstChunkMs`,
 * `toolMs`, `runMs`) and `waitedMs` is how long was waited. A model call's attempt that ran out is
 * retryable: nothing of it is kept, and the loop's retries (or `withFallback`) try again.
 */
export class TimeoutError extends AgentError {
  override name = "TimeoutError";
  /** The limit that ran out: one of the run's `timeouts`, or `waitForTask`'s `timeoutMs`. */
  readonly limit: "modelCallMs" | "firstChunkMs" | "toolMs" | "runMs" | "waitForTask";
  readonly waitedMs: number;

  constructor(limit: TimeoutError["limit"], waitedMs: number, options: { retryable?: boolean } = {}) {
    const what = limit === "waitForTask" ? "waitForTask's timeoutMs" : `timeouts.${limit}`;
    super(`${what} ran out: waited ${Math.round(waitedMs)} ms`, { retryable: options.retryable ?? true });
    this.limit = limit;
    this.waitedMs = waitedMs;
  }
}

export function isTimeoutError(error: unknown): error is TimeoutError {
  return isAgentError(error) && error.name === "TimeoutError";
}

/**
 * A run spent more than its `budget` (`usd` or `tokens`): thrown after the model call that went
 * over, once every call of that turn is answered. `session` holds all the work, as for
 * `MaxIterationsError`.
 */
export class BudgetExceededError extends AgentError {
  override name = "BudgetExceededError";
  readonly budget: { usd?: number; tokens?: number };
  readonly spent: { usd?: number; tokens: number };
  readonly session: Session;

  constructor(
    message: string,
    details: { budget: { usd?: number; tokens?: number }; spent: { usd?: number; tokens: number }; session: Session },
  ) {
    super(message);
    this.budget = details.budget;
    this.spent = details.spent;
    this.session = details.session;
  }
}

export function isBudgetExceededError(error: unknown): error is BudgetExceededError {
  return isAgentError(error) && error.name === "BudgetExceededError";
}

/**
 * A guardrail blocked an input or an answer and the run was made with `throwOnBlock`. `session`
 * is valid (every call answered, the blocked message replaced by its `[blocked by <name>]` marker)
 * and can be run again; `guardrail` names the guardrail, `kind` what it checked.
 */
export class GuardrailTrippedError extends AgentError {
  override name = "GuardrailTrippedError";
  readonly guardrail: string;
  readonly kind: "input" | "output";
  readonly session: Session;

  constructor(message: string, details: { guardrail: string; kind: "input" | "output"; session: Session }) {
    super(message);
    this.guardrail = details.guardrail;
    this.kind = details.kind;
    this.session = details.session;
  }
}

export function isGuardrailTrippedError(error: unknown): error is GuardrailTrippedError {
  return isAgentError(error) && error.name === "GuardrailTrippedError";
}

/**
 * The text of anything thrown, for a message, an event or a span: an `Error`'s message (no `Error:`
 * prefix, no stack), a string as it is, anything else as JSON (BigInts as digits) or its string
 * conversion. Never throws, whatever was thrown (an object without prototype, a throwing getter, a
 * revoked proxy), and is at most `maxErrorLength` characters: longer texts are cut, saying how much.
 */
export function describeError(error: unknown): string {
  let text: string;
  try {
    text = textOf(error);
  } catch {
    text = describeValue(error);
  }
  return boundText(withoutUrlCredentials(text), maxErrorLength);
}

/**
 * `text` with the credentials of every URL in it replaced by `***` (`postgres://***@db/x`): Node
 * quotes a whole URL in its errors, `user:password@` included. Every error text the library
 * reports (errors, events, spans, log lines) goes through this.
 */
export function withoutUrlCredentials(text: string): string {
  return text.replace(urlCredentials, "$1***@");
}

/** Whether `text` holds a URL with credentials (`scheme://user:password@…`, `scheme://token@…`). */
export function hasUrlCredentials(text: string): boolean {
  urlCredentials.lastIndex = 0;
  const found = urlCredentials.test(text);
  urlCredentials.lastIndex = 0;
  return found;
}

// A scheme, then userinfo up to the `@` that ends it (no slash, space, `?` or `#` before it).
const urlCredentials = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;

/** The longest error text `describeError` gives, in characters. */
export const maxErrorLength = 4000;

/** The same as `describeError` (its older name). */
export function errorMessage(error: unknown): string {
  return describeError(error);
}

/** `value instanceof type`, false instead of a throw for a value that cannot be inspected (a revoked proxy). */
export function isInstance<T>(value: unknown, type: abstract new (...args: never[]) => T): value is T {
  try {
    return value instanceof type;
  } catch {
    return false;
  }
}

/** The class name of a thrown `Error` (`error.name`), for telemetry; undefined for anything else. Never throws. */
export function errorType(error: unknown): string | undefined {
  try {
    if (!(error instanceof Error)) return undefined;
    const name: unknown = error.name;
    return typeof name === "string" ? boundText(name, 200) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A short, safe rendering of any value for an error message (an option's bad value, something
 * thrown that has no message): never throws, at most 200 characters.
 */
export function describeValue(value: unknown): string {
  try {
    if (typeof value === "string") return boundText(JSON.stringify(value), 200);
    if (
      typeof value === "number" ||
      typeof value === "bigint" ||
      typeof value === "boolean" ||
      value === undefined ||
      value === null
    )
      return String(value);
    if (typeof value === "symbol" || typeof value === "function") return typeof value;
    const json = JSON.stringify(value, jsonSafe);
    if (json !== undefined) return boundText(json, 200);
  } catch {
    // Circular, or a throwing getter: its own string conversion, if it has one that works.
  }
  try {
    const convert: unknown = (value as { toString?: unknown }).toString;
    const text: unknown = typeof convert === "function" ? convert.call(value) : undefined;
    return typeof text === "string" ? boundText(text, 200) : "a value that cannot be shown";
  } catch {
    return "a value that cannot be shown";
  }
}

/** `text` if it has at most `max` characters, else its first `max` characters and how many were cut. */
export function boundText(text: string, max: number): string {
  if (text.length <= max) return text;
  // Never cut a surrogate pair in two: the half left would not be valid text.
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return `${text.slice(0, end)}… (${text.length - end} more characters)`;
}

function textOf(error: unknown): string {
  if (typeof error === "string") return error;
  if (error instanceof Error) {
    const message: unknown = error.message;
    if (typeof message === "string" && message !== "") return message;
    const name: unknown = error.name;
    return typeof name === "string" ? name : "Error";
  }
  const json = JSON.stringify(error, jsonSafe);
  return json ?? String(error);
}

// JSON has no BigInt: written as its digits, so an error carrying one can still be shown.
function jsonSafe(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
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
  try {
    return typeof error === "object" && error !== null && (error as { retryable?: unknown }).retryable === true;
  } catch {
    return false;
  }
}
