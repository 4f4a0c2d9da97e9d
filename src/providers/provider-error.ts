import {
  ContextOverflowError,
  ProviderError,
  errorMessage,
  isAbortError,
  isAgentError,
  withoutUrlCredentials,
} from "../errors.ts";

/** What an adapter knows about its provider's error bodies. */
export type ErrorShape = {
  /** The human message and the provider's error code/type, from a parsed error body and the response headers (absent for an error event in a stream). */
  describe: (body: unknown, headers: Headers | undefined) => { message?: string; code?: string; retryAfterMs?: number };
  /** Codes that mean "try again" whatever the HTTP status (e.g. Anthropic's `overloaded_error`). */
  retryableCodes?: readonly string[];
  /** Codes that mean "do not retry" even with a retryable status (OpenAI's `insufficient_quota` comes as a 429). */
  fatalCodes?: readonly string[];
};

const excerptLength = 300;
const messageLength = 1000;

/**
 * The rule for any failure of a call: an abort or one of our errors passes as it is; anything
 * else (a connection cut, a garbled frame, an oversized event) becomes a retryable
 * `ProviderError` whose message is scrubbed of `secrets` and bounded.
 */
export function streamFailure(
  error: unknown,
  provider: string,
  secrets: readonly (string | undefined)[] = [],
  signal?: AbortSignal,
  what = "the stream",
): unknown {
  if (signal?.aborted === true || isAgentError(error) || isAbortError(error)) return error;
  // A JSON parser's message quotes the input around the fault: no cause, so no copy of it survives.
  const parse = error instanceof SyntaxError;
  return new ProviderError(bounded(`${provider}: ${what} failed: ${describeCauses(error)}`, secrets), {
    provider,
    retryable: true,
    ...(parse ? {} : { cause: error }),
  });
}

/** The typed error for a failed response (also for an error event inside a stream, with status undefined). */
export function providerError(
  provider: string,
  status: number | undefined,
  headers: Headers | undefined,
  text: string,
  shape: ErrorShape,
  secrets?: readonly (string | undefined)[],
): ProviderError {
  const described = describeBody(text, shape, headers);
  const fallback = excerpt(text) || (status === undefined ? "unknown error" : `HTTP ${status}`);
  const message = bounded(`${provider}: ${described.message ?? fallback}`, secrets);
  const retryAfterMs = retryAfter(headers) ?? described.retryAfterMs;
  const requestId =
    headers?.get("request-id") ?? headers?.get("x-request-id") ?? headers?.get("x-amzn-requestid") ?? undefined;
  const details = {
    provider,
    retryable:
      !(described.code !== undefined && (shape.fatalCodes ?? []).includes(described.code)) &&
      (isRetryableStatus(status) ||
        (described.code !== undefined && (shape.retryableCodes ?? []).includes(described.code))),
    ...(status === undefined ? {} : { status }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    ...(requestId === undefined ? {} : { requestId: requestId.slice(0, 200) }),
    ...(described.code === undefined ? {} : { code: described.code.slice(0, 200) }),
  };
  // "Too many tokens, please wait" is throttling, not overflow: a retryable code settles it.
  const throttled = described.code !== undefined && (shape.retryableCodes ?? []).includes(described.code);
  if (!throttled && isContextOverflow(status, described.code, message))
    return new ContextOverflowError(message, { ...details, retryable: false });
  return new ProviderError(message, details);
}

export function describeBody(
  text: string,
  shape: ErrorShape,
  headers: Headers | undefined,
): ReturnType<ErrorShape["describe"]> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return {}; // Not JSON (a proxy's HTML page, an empty body): the text speaks for itself.
  }
  return typeof body === "object" && body !== null ? shape.describe(body, headers) : {};
}

/** `retry-after-ms`, then `retry-after` in seconds or as an HTTP date. */
export function retryAfter(headers: Headers | undefined): number | undefined {
  const milliseconds = Number(headers?.get("retry-after-ms") ?? Number.NaN);
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
  const value = headers?.get("retry-after");
  if (value === null || value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * `text` fit for an error message: every secret replaced by `***`, cut to a bounded length, and
 * then any piece of a secret of 8 characters or more that survived (a parser's excerpt cut
 * through a key) masked too.
 */
export function bounded(
  text: string,
  secrets: readonly (string | undefined)[] | undefined,
  length = messageLength,
): string {
  let clean = withoutUrlCredentials(text);
  const known = (secrets ?? []).filter((secret): secret is string => secret !== undefined && secret.length >= 8);
  for (const secret of known) clean = clean.split(secret).join("***");
  if (clean.length > length) clean = `${clean.slice(0, length)}… (${clean.length - length} more characters)`;
  for (const secret of known) clean = maskFragments(clean, secret);
  return clean;
}

/**
 * What went wrong, cause by cause: fetch says only "fetch failed" or "terminated"; the reason
 * (ECONNREFUSED 127.0.0.1:9, a reset, DNS) is in its causes, and the several attempts of a
 * dual-stack connect in an AggregateError.
 */
export function describeCauses(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    const nested =
      current instanceof AggregateError ? current.errors.map(errorMessage).filter((text) => text !== "") : [];
    const text = nested.length > 0 ? nested.join(", ") : errorMessage(current);
    const code = (current as { code?: unknown }).code;
    const withCode = typeof code === "string" && !text.includes(code) ? `${text} (${code})` : text;
    if (withCode !== "" && !parts.includes(withCode)) parts.push(withCode);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(": ") || "unknown error";
}

/** The start of a body, whitespace collapsed, for an error message. */
export function excerpt(text: string): string {
  const collapsed = text.replace(/\s+/g, " ").trim();
  return collapsed.length > excerptLength ? `${collapsed.slice(0, excerptLength)}…` : collapsed;
}

// Masks every run of at least 8 characters that also occurs in `secret`.
function maskFragments(text: string, secret: string): string {
  const width = 8;
  const windows = new Set<string>();
  for (let at = 0; at + width <= secret.length; at++) windows.add(secret.slice(at, at + width));
  let result = "";
  let copied = 0;
  let maskedTo = -1;
  for (let at = 0; at + width <= text.length; at++) {
    if (!windows.has(text.slice(at, at + width))) continue;
    if (at > maskedTo) {
      result += text.slice(copied, at) + "***";
    }
    maskedTo = at + width;
    copied = maskedTo;
  }
  return copied === 0 ? text : result + text.slice(copied);
}

function isRetryableStatus(status: number | undefined): boolean {
  return status === 408 || status === 409 || status === 429 || (status !== undefined && status >= 500);
}

// Each provider words it differently; these are the phrasings their APIs use for a request that
// does not fit the context window.
const overflowPatterns = [
  /prompt is too long/i,
  /context[_ ]length[_ ]exceeded/i,
  /maximum context length/i,
  /exceeds the (?:maximum|context)/i,
  /input (?:is )?too long/i,
  /too many (?:input )?tokens/i,
  /context window/i,
  /input token count.*exceeds/i,
  // OpenAI-compatible servers: llama.cpp, llama-cpp-python, LM Studio.
  /exceeds the available context size/i,
  /exceed context window/i,
  /context length of only/i,
];

function isContextOverflow(status: number | undefined, code: string | undefined, message: string): boolean {
  if (code === "context_length_exceeded" || code === "exceed_context_size_error") return true;
  // Older llama.cpp answered an overflow with a 500.
  if (status !== undefined && status !== 400 && status !== 413 && status !== 500) return false;
  return overflowPatterns.some((pattern) => pattern.test(message));
}
