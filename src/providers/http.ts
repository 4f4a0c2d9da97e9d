import { AgentError, ProviderError, isAgentError } from "../errors.ts";
import { maxTimerDelay } from "../numeric-options.ts";
import type { DownloadPartsOptions } from "./download-parts-options.ts";
import { decodeEventStream, type EventStreamMessage } from "./aws-event-stream.ts";
import {
  bounded,
  describeBody,
  describeCauses,
  excerpt,
  providerError,
  streamFailure,
  type ErrorShape,
} from "./provider-error.ts";
import { parseSseBatches, type ServerSentEvent } from "./sse.ts";

/** `fetch` or anything with its signature (a test double, a proxy-aware client). */
export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

/** The transport options every adapter takes, under the same names. */
export type TransportOptions = {
  /**
   * The longest wait, in milliseconds, for the next bytes from the server: the response headers of
   * a streamed call, then each piece of any response body. A server that stays silent longer fails
   * the call with a retryable `ProviderError` (the loop repeats it). Default 300000 (5 minutes);
   * `Infinity` waits forever. Must be a positive number.
   */
  idleTimeoutMs?: number;
  /**
   * Whether and where the adapter downloads a URL part its provider cannot fetch (OpenAI Chat's
   * file URLs, Gemini's URLs other than its own file URIs, every URL for Bedrock): by default only
   * `https:` URLs on public addresses, 20 MiB and 30 seconds at most (see `DownloadPartsOptions`);
   * `false` downloads nothing and such a part is an `AgentError`. An adapter whose provider fetches
   * URLs itself (Anthropic, OpenAI Responses) passes them on and downloads nothing.
   */
  downloadParts?: DownloadPartsOptions | false;
};

export type PostOptions = TransportOptions & {
  provider: string;
  url: string;
  /** Sent to `url`'s origin only: a redirect elsewhere is refused, never followed with them. */
  headers: Record<string, string>;
  body: unknown;
  fetch: Fetch | undefined;
  signal: AbortSignal;
  errors: ErrorShape;
  /** Secrets to scrub from any error message (the API key). */
  secrets?: readonly (string | undefined)[];
  /**
   * The body a 2xx must have: JSON (the default), a `text/event-stream` (`"sse"`) or an AWS event
   * stream. A 2xx with an HTML, XML or JSON body where a stream was expected is an error naming
   * what came back.
   */
  expect?: "json" | "sse" | "aws-event-stream";
  /** The most bytes any response body may have (default 256 MiB, far above a real turn); more fails the call. */
  maxBodyBytes?: number;
};

/** The default of `idleTimeoutMs`: long enough for a model that thinks before its first token. */
export const defaultIdleTimeoutMs = 300_000;

// Caps on what a server can make us hold. An error body past its cap is cut (its start says what
// went wrong); a JSON answer past its cap is an error, refused before reading when its
// content-length says so.
const errorBodyLimit = 64 * 1024;
const defaultMaxBodyBytes = 256 * 1024 * 1024;
const responseBodyLimit = 64 * 1024 * 1024;
const maxRedirects = 5;

/**
 * POSTs JSON and returns the response if it is 2xx, its body guarded: a read that waits longer than
 * `idleTimeoutMs`, or a connection that breaks, fails with a retryable `ProviderError` naming the
 * cause. Anything else becomes a `ProviderError` (or `ContextOverflowError`) with status,
 * retryability, retry-after and request id; a network failure is a retryable `ProviderError`
 * naming its cause and target. Redirects are followed only on the same origin (307 and 308, which
 * keep the method); one to another origin is refused, so the headers never travel there. An abort
 * is rethrown as is.
 */
export async function postJson(options: PostOptions): Promise<Response> {
  // Checked by the adapter when the model was made (checkIdleTimeout), not again per request.
  const idleTimeoutMs = options.idleTimeoutMs ?? defaultIdleTimeoutMs;
  const streamed = options.expect === "sse" || options.expect === "aws-event-stream";
  const link = linkedAbort(options.signal);
  let settled = false;
  try {
    let url = options.url;
    let response: Response;
    for (let hop = 0; ; hop++) {
      response = await send(url, options, link, streamed ? idleTimeoutMs : Number.POSITIVE_INFINITY);
      let next: string | undefined;
      try {
        next = redirectTarget(response, url, options, hop);
      } catch (error) {
        await response.body?.cancel().catch(() => undefined);
        throw error;
      }
      if (next === undefined) break;
      await response.body?.cancel().catch(() => undefined);
      url = next;
    }
    if (!response.ok) {
      const text = await readText(response, errorBodyLimit, options, idleTimeoutMs, link);
      throw providerError(options.provider, response.status, response.headers, text, options.errors, options.secrets);
    }
    await checkContentType(response, options, idleTimeoutMs, link);
    settled = true;
    return guardedResponse(response, { ...options, idleTimeoutMs, link });
  } finally {
    if (!settled) link.release();
  }
}

/**
 * The JSON body of a non-streamed response, read up to a cap. A body that is not JSON (a proxy's
 * HTML page) or too large is a `ProviderError` naming what came back, never a bare `SyntaxError`.
 */
export async function readJson(
  response: Response,
  provider: string,
  secrets?: readonly (string | undefined)[],
): Promise<unknown> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > responseBodyLimit) {
    await response.body?.cancel().catch(() => undefined);
    throw new ProviderError(
      `${provider}: the response is ${declared} bytes, more than the ${responseBodyLimit} accepted`,
      { provider, status: response.status, retryable: false },
    );
  }
  const { text, cut } = await readUpTo(response.body, responseBodyLimit);
  if (cut)
    throw new ProviderError(`${provider}: the response is larger than the ${responseBodyLimit} bytes accepted`, {
      provider,
      status: response.status,
      retryable: false,
    });
  try {
    return JSON.parse(text) as unknown;
  } catch {
    const type = response.headers.get("content-type") ?? "no content-type";
    // The same address will answer the same page: not worth repeating.
    throw new ProviderError(
      bounded(`${provider}: expected JSON but HTTP ${response.status} came with ${type}: ${excerpt(text)}`, secrets),
      {
        provider,
        status: response.status,
        retryable: false,
      },
    );
  }
}

/** Whose call it is, for its errors: the provider, the secrets to scrub, the run's signal (an abort passes as it is). */
export type CallScope = {
  provider: string;
  secrets?: readonly (string | undefined)[] | undefined;
  signal?: AbortSignal | undefined;
};

/**
 * The one way an adapter reads a streamed call: `open` it (normally `postJson`, whose body guard
 * types a connection that breaks and a server that stalls past `idleTimeoutMs`), frame its body as
 * server-sent events, and hand `read` one batch of events per network chunk. Whatever fails on
 * the way, in `open`, the body or `read`, leaves as `streamFailure` types it, so a failure reads the
 * same whatever the provider.
 */
export function readSseStream<T>(
  open: () => Promise<Response>,
  scope: CallScope,
  read: (batches: AsyncGenerator<ServerSentEvent[]>) => AsyncGenerator<T>,
): AsyncGenerator<T> {
  return readStream(open, scope, (body) => read(parseSseBatches(body)));
}

/**
 * The one way an adapter reads a call that is not streamed: `open` it, read the JSON body
 * (`readJson`) and `convert` it. Whatever fails, a body that is no answer at all (`null`) included,
 * leaves as `streamFailure` types it.
 */
export async function readJsonAnswer<T>(
  open: () => Promise<Response>,
  scope: CallScope,
  convert: (body: unknown, response: Response) => T,
): Promise<T> {
  try {
    const response = await open();
    return convert(await readJson(response, scope.provider, scope.secrets), response);
  } catch (error) {
    throw streamFailure(error, scope.provider, scope.secrets, scope.signal, "the response");
  }
}

/** `readSseStream` for a body in the AWS event stream encoding (Bedrock): one batch of messages per network chunk. */
export function readAwsEventStream<T>(
  open: () => Promise<Response>,
  scope: CallScope,
  read: (batches: AsyncGenerator<EventStreamMessage[]>) => AsyncGenerator<T>,
): AsyncGenerator<T> {
  return readStream(open, scope, (body) => read(decodeEventStream(body)));
}

/**
 * One stream event's JSON payload. An unreadable one is a retryable `ProviderError` quoting the
 * event's start, scrubbed of `secrets`, never a `SyntaxError` (whose message would quote the
 * input around the fault, unscrubbed).
 */
export function parseStreamEvent(data: string, scope: CallScope): unknown {
  try {
    return JSON.parse(data) as unknown;
  } catch {
    throw new ProviderError(
      bounded(`${scope.provider}: unreadable stream event: ${data.slice(0, 200)}`, scope.secrets),
      { provider: scope.provider, retryable: true },
    );
  }
}

async function* readStream<T>(
  open: () => Promise<Response>,
  scope: CallScope,
  read: (body: ReadableStream<Uint8Array>) => AsyncGenerator<T>,
): AsyncGenerator<T> {
  try {
    const response = await open();
    if (response.body === null)
      throw new ProviderError(`${scope.provider}: empty response body`, { provider: scope.provider, retryable: true });
    yield* read(response.body);
  } catch (error) {
    throw streamFailure(error, scope.provider, scope.secrets, scope.signal);
  }
}

/**
 * An adapter's `idleTimeoutMs`, checked once when the model is made: a `RangeError` unless a
 * positive number (`Infinity`: no timer); the default when undefined.
 */
export function checkIdleTimeout(value: number | undefined): number {
  if (value === undefined) return defaultIdleTimeoutMs;
  if (typeof value !== "number" || Number.isNaN(value) || value <= 0)
    throw new RangeError(`idleTimeoutMs must be a positive number of milliseconds, not ${String(value)}`);
  return value;
}

type Link = { signal: AbortSignal; abort: (reason: unknown) => void; release: () => void };

// Our own controller, aborted with the caller's signal, so an idle timeout can close the
// connection without aborting the caller's run. `release` drops the listener on the caller's
// signal once the response is done (a run's signal outlives many calls).
function linkedAbort(outer: AbortSignal): Link {
  const controller = new AbortController();
  const forward = (): void => controller.abort(outer.reason);
  if (outer.aborted) forward();
  else outer.addEventListener("abort", forward, { once: true });
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    release: () => outer.removeEventListener("abort", forward),
  };
}

// A body that cannot be written (nested too deep for JSON.stringify, a cycle) is a local failure:
// never the provider's, never retried.
function requestBody(options: PostOptions): string {
  try {
    return JSON.stringify(options.body);
  } catch (error) {
    throw new AgentError(`${options.provider}: the request could not be written as JSON: ${describeCauses(error)}`, {
      cause: error,
    });
  }
}

async function send(url: string, options: PostOptions, link: Link, idleTimeoutMs: number): Promise<Response> {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const request = fetchImpl(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...options.headers },
    body: requestBody(options),
    signal: link.signal,
    redirect: "manual",
  });
  try {
    return await withinIdleTimeout(request, idleTimeoutMs, options.provider, "the response headers", link);
  } catch (error) {
    if (options.signal.aborted || isAgentError(error)) throw error;
    const target = describeTarget(url);
    throw new ProviderError(
      bounded(`${options.provider}: request to ${target} failed: ${describeCauses(error)}`, options.secrets),
      {
        provider: options.provider,
        retryable: true,
        cause: error,
      },
    );
  }
}

// Settles like `pending`, or fails with a retryable idle-timeout error when nothing came for
// `idleTimeoutMs`; then the connection is closed.
function withinIdleTimeout<T>(
  pending: Promise<T>,
  idleTimeoutMs: number,
  provider: string,
  what: string,
  link: Link,
): Promise<T> {
  // Longer than setTimeout can count: no timer at all.
  if (idleTimeoutMs > maxTimerDelay) return pending;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new ProviderError(
        `${provider}: no data from the server for ${idleTimeoutMs} ms while waiting for ${what} (idleTimeoutMs)`,
        { provider, retryable: true },
      );
      link.abort(error);
      reject(error);
    }, idleTimeoutMs);
  });
  // The losing promise must not become an unhandled rejection.
  pending.catch(() => undefined);
  return Promise.race([pending, timeout]).finally(() => clearTimeout(timer));
}

// Where a redirect leads, if it is to be followed; throws for one that must not be.
function redirectTarget(response: Response, url: string, options: PostOptions, hop: number): string | undefined {
  const refuse = (
    why: string,
    status: number,
    advice = "the request was not sent there. Set baseURL to the final address.",
  ): ProviderError =>
    new ProviderError(bounded(`${options.provider}: ${why}; ${advice}`, options.secrets), {
      provider: options.provider,
      status,
      retryable: false,
    });
  // A browser's fetch hides a manual redirect's target.
  if (response.type === "opaqueredirect")
    throw refuse(`${describeTarget(url)} answered with a redirect`, response.status);
  // A custom fetch that follows redirects itself (ignoring `redirect: "manual"`) has already sent
  // the headers; at least its answer is not used, and the message says where they went.
  if (response.redirected && response.url !== "" && new URL(response.url).origin !== new URL(url).origin) {
    const elsewhere = new URL(response.url).origin;
    throw refuse(
      `the fetch function followed a redirect from ${describeTarget(url)} to another origin, ${elsewhere}, with the request's headers`,
      response.status,
      'its answer is not used. Pass a fetch that honours redirect: "manual".',
    );
  }
  if (response.status < 300 || response.status > 399 || response.status === 304) return undefined;
  const location = response.headers.get("location");
  if (location === null) return undefined;
  let target: URL;
  try {
    target = new URL(location, url);
  } catch {
    throw refuse(`${describeTarget(url)} redirected to an invalid address`, response.status);
  }
  if (target.origin !== new URL(url).origin) {
    throw refuse(
      `${describeTarget(url)} redirected (HTTP ${response.status}) to another origin, ${target.origin}: credentials are never sent to another origin`,
      response.status,
    );
  }
  if (response.status !== 307 && response.status !== 308) {
    throw refuse(
      `${describeTarget(url)} redirected (HTTP ${response.status}) to ${describeTarget(target.href)}, which would turn the POST into a GET`,
      response.status,
    );
  }
  if (hop >= maxRedirects) throw refuse(`${describeTarget(url)}: more than ${maxRedirects} redirects`, response.status);
  return target.href;
}

// The origin and path, never the query (where a key might be).
function describeTarget(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return "the server";
  }
}

// A 2xx whose body is plainly not the stream asked for: a login page, a proxy's notice, a server
// that ignored `stream: true`. Its start says what it is.
async function checkContentType(
  response: Response,
  options: PostOptions,
  idleTimeoutMs: number,
  link: Link,
): Promise<void> {
  if (options.expect !== "sse" && options.expect !== "aws-event-stream") return;
  const type = response.headers.get("content-type") ?? "";
  if (!/html|xml|json/i.test(type) || /event-?stream/i.test(type)) return;
  const text = await readText(response, errorBodyLimit, options, idleTimeoutMs, link);
  const expected = options.expect === "sse" ? "text/event-stream" : "application/vnd.amazon.eventstream";
  // Some proxies answer 200 with an error body: that error, when the body is one.
  if (/json/i.test(type)) {
    const described = describeBody(text, options.errors, response.headers);
    if (described.message !== undefined || described.code !== undefined)
      throw providerError(options.provider, undefined, response.headers, text, options.errors, options.secrets);
  }
  throw new ProviderError(
    bounded(
      `${options.provider}: expected ${expected} but HTTP ${response.status} came with ${type}: ${excerpt(text)}`,
      options.secrets,
    ),
    {
      provider: options.provider,
      status: response.status,
      retryable: false,
    },
  );
}

// The start of a body that explains a failure, up to `limit` bytes, each read within the idle
// timeout. A body that breaks off explains nothing: then the status alone speaks.
async function readText(
  response: Response,
  limit: number,
  options: PostOptions,
  idleTimeoutMs: number,
  link: Link,
): Promise<string> {
  const guarded = guardBody(response.body, { ...options, idleTimeoutMs, link });
  try {
    return (await readUpTo(guarded, limit)).text;
  } catch (error) {
    if (options.signal.aborted) throw error;
    return "";
  }
}

// Reads at most `limit` bytes, then cancels the rest: a body is never held whole before its size is known.
async function readUpTo(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<{ text: string; cut: boolean }> {
  if (body === null) return { text: "", cut: false };
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = limit - size;
      parts.push(decoder.decode(value.length > room ? value.subarray(0, room) : value, { stream: true }));
      size += Math.min(value.length, room);
      if (value.length > room) return { text: parts.join(""), cut: true };
    }
    parts.push(decoder.decode());
    return { text: parts.join(""), cut: false };
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}

type Guard = PostOptions & { idleTimeoutMs: number; link: Link };

function guardedResponse(response: Response, guard: Guard): Response {
  const body = guardBody(response.body, guard);
  if (body === null) {
    guard.link.release();
    return response;
  }
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

// The response body as it arrives, each read within the idle timeout; a read that fails (the
// connection cut, reset) is a retryable `ProviderError` naming its cause.
function guardBody(body: ReadableStream<Uint8Array> | null, guard: Guard): ReadableStream<Uint8Array> | null {
  if (body === null) return null;
  const reader = body.getReader();
  const limit = guard.maxBodyBytes ?? defaultMaxBodyBytes;
  let received = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await withinIdleTimeout(
            reader.read(),
            guard.idleTimeoutMs,
            guard.provider,
            "the next part of the body",
            guard.link,
          );
        } catch (error) {
          guard.link.release();
          if (guard.signal.aborted || isAgentError(error)) throw error;
          throw new ProviderError(
            bounded(`${guard.provider}: the response broke off: ${describeCauses(error)}`, guard.secrets),
            {
              provider: guard.provider,
              retryable: true,
              cause: error,
            },
          );
        }
        if (chunk.done) {
          guard.link.release();
          controller.close();
          return;
        }
        received += chunk.value.length;
        if (received > limit) {
          guard.link.release();
          await reader.cancel().catch(() => undefined);
          throw new ProviderError(
            `${guard.provider}: the response is larger than the ${limit} bytes accepted (maxBodyBytes)`,
            { provider: guard.provider, retryable: false },
          );
        }
        controller.enqueue(chunk.value);
      },
      async cancel(reason) {
        guard.link.release();
        await reader.cancel(reason).catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
}
