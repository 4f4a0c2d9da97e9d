import { toBase64, type ContentPart } from "../content-parts.ts";
import { AgentError } from "../errors.ts";
import { maxTimerDelay } from "../numeric-options.ts";
import type { InvokeModel, ModelContext } from "../model/invoke-model.ts";
import type { ModelStreamEvent } from "../model/model-stream-event.ts";
import type { Message, Session } from "../session.ts";
import type { ToolSchema } from "../shared/tool-schema.ts";
import type { Fetch } from "./http.ts";
import { bareMediaType, isUrlPart, type UrlPart } from "./content-convert.ts";
import { guardedDownload } from "./guarded-download.ts";
import { passOnRefusal } from "./passed-on-url.ts";
import {
  defaultDownloadTimeoutMs,
  defaultMaxDownloadBytes,
  type DownloadPartsOptions,
} from "./download-parts-options.ts";

/**
 * `invoke`, with each URL part that `needsDownload` selects replaced by its bytes first, downloaded
 * by `guardedDownload` under the rule of `downloadParts` (through `fetch` when the adapter was
 * given one; the media type from the part, else from the response), and every other URL part
 * (passed on for the provider to fetch) checked first by `passOnRefusal`: a refused one fails the
 * call with that `AgentError` before any request. With `downloadParts: false` nothing is checked or
 * downloaded. A session without URL parts goes to `invoke` as it is, at the cost of one walk over its messages. `stream` says what
 * `invoke` returns (events, or a promise of messages), so the download can come before it. Throws
 * an `AgentError` naming the option for a `downloadParts` that is neither `false` nor its options.
 */
export function withUrlDownloads<T extends InvokeModel>(
  invoke: T,
  options: {
    downloadParts?: DownloadPartsOptions | false | undefined;
    adapter: string;
    fetch?: Fetch | undefined;
    stream: boolean;
    needsDownload: (part: UrlPart) => boolean;
  },
): T {
  const checked = checkDownloadParts(options.downloadParts, options.adapter);
  if (checked === false) return invoke;
  // Named apart so the functions below see it as options, never `false`.
  const settings: DownloadPartsOptions = checked;
  const wrapped = ((tools: ToolSchema[], session: Session, context: ModelContext) => {
    const scan = scanUrlParts(session);
    if (scan instanceof AgentError) return options.stream ? failedStream(scan) : Promise.reject(scan);
    if (!scan) return invoke(tools, session, context);
    const downloaded = downloadParts(session, context.signal);
    if (!options.stream) return downloaded.then((copy) => invoke(tools, copy, context));
    return (async function* (): AsyncGenerator<ModelStreamEvent> {
      // A streaming adapter answers with events.
      yield* invoke(tools, await downloaded, context) as AsyncIterable<ModelStreamEvent>;
    })();
  }) as T;
  Object.assign(wrapped, invoke);
  return wrapped;

  function needs(part: ContentPart): part is UrlPart {
    return isUrlPart(part) && options.needsDownload(part);
  }

  // Whether any URL part is to be downloaded; the refusal of the first passed on that may not be.
  function scanUrlParts(session: Session): boolean | AgentError {
    let download = false;
    for (const message of session.messages)
      for (const part of messageParts(message)) {
        if (!isUrlPart(part)) continue;
        if (options.needsDownload(part)) download = true;
        else {
          const refusal = passOnRefusal(part.url, options.adapter, settings.allow);
          if (refusal !== undefined) return refusal;
        }
      }
    return download;
  }

  // One download per URL, however often the session names it.
  async function downloadParts(session: Session, signal: AbortSignal): Promise<Session> {
    const downloads = new Map<string, Promise<{ mediaType: string; data: string }>>();
    const fetchPart = (part: UrlPart): Promise<{ mediaType: string; data: string }> => {
      let download = downloads.get(part.url);
      if (download === undefined) {
        download = downloadPart(part, signal);
        downloads.set(part.url, download);
      }
      return download;
    };
    const messages = await Promise.all(
      session.messages.map(async (message) => {
        const parts = messageParts(message);
        if (!parts.some((part) => needs(part))) return message;
        const replaced = await Promise.all(
          parts.map(async (part): Promise<ContentPart> => {
            if (!needs(part)) return part;
            const { mediaType, data } = await fetchPart(part);
            const { url: _url, ...rest } = part;
            return { ...rest, mediaType: part.mediaType ?? mediaType, data };
          }),
        );
        return "role" in message ? { ...message, content: replaced } : { ...message, content: replaced };
      }),
    );
    return { messages: messages as Message[] };
  }

  async function downloadPart(part: UrlPart, signal: AbortSignal): Promise<{ mediaType: string; data: string }> {
    const { mediaType, bytes } = await guardedDownload({
      url: part.url,
      adapter: options.adapter,
      allow: settings.allow,
      fetch: options.fetch,
      signal,
      maxBytes: settings.maxBytes ?? defaultMaxDownloadBytes,
      timeoutMs: settings.timeoutMs ?? defaultDownloadTimeoutMs,
    });
    return { mediaType: bareMediaType(mediaType) ?? "application/octet-stream", data: toBase64(bytes) };
  }
}

// A stream that fails at once: a streaming adapter answers with events, its errors among them.
async function* failedStream(error: Error): AsyncGenerator<ModelStreamEvent> {
  yield* [];
  throw error;
}

/** `downloadParts` checked: `false`, or its options with each field of the right type. */
function checkDownloadParts(value: unknown, adapter: string): DownloadPartsOptions | false {
  const wrong = (what: string): AgentError => new AgentError(`${adapter}: downloadParts${what}`);
  if (value === undefined) return {};
  if (value === false) return false;
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw wrong(
      ` must be false or an object ({ allow, maxBytes, timeoutMs }), not ${JSON.stringify(value) ?? typeof value}`,
    );
  const { allow, maxBytes, timeoutMs, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0)
    throw wrong(` has no field ${JSON.stringify(unknown[0])} (it takes allow, maxBytes, timeoutMs)`);
  if (allow !== undefined && typeof allow !== "function") throw wrong(".allow must be a function (url) => boolean");
  if (maxBytes !== undefined && !(Number.isSafeInteger(maxBytes) && (maxBytes as number) > 0))
    throw wrong(`.maxBytes must be a positive integer, not ${JSON.stringify(maxBytes) ?? typeof maxBytes}`);
  if (timeoutMs !== undefined && !(typeof timeoutMs === "number" && timeoutMs > 0 && timeoutMs <= maxTimerDelay))
    throw wrong(
      `.timeoutMs must be a positive number of milliseconds up to ${maxTimerDelay}, not ${JSON.stringify(timeoutMs) ?? typeof timeoutMs}`,
    );
  return value;
}

/** The content parts of a message (a user message's or a tool result's), or none. */
function messageParts(message: Message): readonly ContentPart[] {
  if ("role" in message) return message.role === "user" && Array.isArray(message.content) ? message.content : [];
  return message.type === "tool_result" && message.content !== undefined ? message.content : [];
}
