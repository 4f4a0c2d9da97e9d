import { ContextOverflowError, ProviderError, errorMessage } from "../errors.ts";

/** `fetch` or anything with its signature (a test double, a proxy-aware client). */
export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

/** What an adapter knows about its provider's error bodies. */
export type ErrorShape = {
  /** The human message and the provider's error code/type, from a parsed error body. */
  describe: (body: unknown) => { message?: string; code?: string; retryAfterMs?: number };
  /** Codes that mean "try again" whatever the HTTP status (e.g. Anthropic's `overloaded_error`). */
  retryableCodes?: readonly string[];
  /** Codes that mean "do not retry" even with a retryable status (OpenAI's `insufficient_quota` comes as a 429). */
  fatalCodes?: readonly string[];
};

export type PostOptions = {
  provider: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  fetch: Fetch | undefined;
  signal: AbortSignal;
  errors: ErrorShape;
  /** Secrets to scrub from any error message (the API key). */
  secrets?: readonly (string | undefined)[];
};

/**
 * POSTs JSON and returns the response if it is 2xx. Anything else becomes a `ProviderError` (or
 * `ContextOverflowError`) with status, retryability, retry-after and request id; a network failure
 * is a retryable `ProviderError`. An abort is rethrown as is.
 */
export async function postJson(options: PostOptions): Promise<Response> {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  let response: Response;
  try {
    response = await fetchImpl(options.url, {
      method: "POST",
      headers: { "content-type": "application/json", ...options.headers },
      body: JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (error) {
    if (options.signal.aborted) throw error;
    throw new ProviderError(scrub(`${options.provider}: request failed: ${errorMessage(error)}`, options.secrets), {
      provider: options.provider,
      retryable: true,
      cause: error,
    });
  }
  if (response.ok) return response;
  const text = await response.text().catch(() => "");
  throw providerError(options.provider, response.status, response.headers, text, options.errors, options.secrets);
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
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's HTML page, an empty body): keep the text.
  }
  const described = typeof body === "object" && body !== null ? shape.describe(body) : {};
  const fallback = text.trim().slice(0, 500) || (status === undefined ? "unknown error" : `HTTP ${status}`);
  const message = scrub(`${provider}: ${described.message ?? fallback}`, secrets);
  const retryAfterMs = retryAfter(headers) ?? described.retryAfterMs;
  const requestId = headers?.get("request-id") ?? headers?.get("x-request-id") ?? headers?.get("x-amzn-requestid") ?? undefined;
  const details = {
    provider,
    retryable:
      !(described.code !== undefined && (shape.fatalCodes ?? []).includes(described.code)) &&
      (isRetryableStatus(status) || (described.code !== undefined && (shape.retryableCodes ?? []).includes(described.code))),
    ...(status === undefined ? {} : { status }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    ...(requestId === undefined ? {} : { requestId }),
    ...(described.code === undefined ? {} : { code: described.code }),
  };
  // "Too many tokens, please wait" is throttling, not overflow: a retryable code settles it.
  const throttled = described.code !== undefined && (shape.retryableCodes ?? []).includes(described.code);
  if (!throttled && isContextOverflow(status, described.code, message)) return new ContextOverflowError(message, { ...details, retryable: false });
  return new ProviderError(message, details);
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

function scrub(text: string, secrets: readonly (string | undefined)[] | undefined): string {
  let clean = text;
  for (const secret of secrets ?? []) if (secret !== undefined && secret.length >= 8) clean = clean.split(secret).join("***");
  return clean;
}

/** An environment variable where there is a `process` (Node, Bun, Deno); `undefined` elsewhere. */
export function env(name: string): string | undefined {
  const processLike = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  const value = processLike?.env?.[name];
  return value === "" ? undefined : value;
}
