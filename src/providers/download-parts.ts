import { toBase64, type ContentPart } from "../content-parts.ts";
import { AgentError, errorMessage } from "../errors.ts";
import type { InvokeModel, ModelContext } from "../model/invoke-model.ts";
import type { ModelStreamEvent } from "../model/model-stream-event.ts";
import type { Message, Session } from "../session.ts";
import type { ToolSchema } from "../shared/tool-schema.ts";
import type { Fetch } from "./http.ts";
import { bareMediaType, isUrlPart, type UrlPart } from "./content-convert.ts";

/** How an adapter downloads URL parts its provider cannot fetch itself. */
export type DownloadOptions = {
  /**
   * Download URL parts the provider cannot fetch (default true): the adapter fetches them through
   * its `fetch` and sends the bytes. `false`: such a part is an `AgentError` before any request.
   */
  downloadUrls?: boolean;
  /** The most bytes one downloaded part may have (default 20 MiB); a larger one fails the call. */
  maxDownloadBytes?: number;
};

/** The default of `maxDownloadBytes`: above what any provider takes inline in one request. */
export const defaultMaxDownloadBytes = 20 * 1024 * 1024;

/**
 * `invoke`, with each URL part that `needsDownload` selects replaced by its bytes first, downloaded
 * through `fetch` (the media type from the part, else from the response). A session without such
 * parts goes to `invoke` as it is, at the cost of one walk over its messages. `stream` says what
 * `invoke` returns (events, or a promise of messages), so the download can come before it.
 */
export function withUrlDownloads<T extends InvokeModel>(
  invoke: T,
  options: DownloadOptions & {
    adapter: string;
    fetch?: Fetch | undefined;
    stream: boolean;
    needsDownload: (part: UrlPart) => boolean;
  },
): T {
  if (options.downloadUrls === false) return invoke;
  const maxBytes = options.maxDownloadBytes ?? defaultMaxDownloadBytes;
  if (!(Number.isSafeInteger(maxBytes) && maxBytes > 0))
    throw new AgentError(`${options.adapter}: maxDownloadBytes must be a positive integer, not ${String(maxBytes)}`);
  const wrapped = ((tools: ToolSchema[], session: Session, context: ModelContext) => {
    if (!session.messages.some((message) => messageParts(message).some((part) => needs(part)))) {
      return invoke(tools, session, context);
    }
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
    const { adapter } = options;
    const failed = (why: string, retryable = false, cause?: unknown): AgentError =>
      new AgentError(`${adapter}: could not download ${JSON.stringify(part.url.slice(0, 200))} (${why})`, {
        retryable,
        cause,
      });
    let response: Response;
    try {
      response = await (options.fetch ?? globalThis.fetch)(part.url, { signal, redirect: "follow" });
    } catch (error) {
      if (signal.aborted) throw error;
      throw failed(errorMessage(error), true, error);
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw failed(`HTTP ${response.status}`, response.status >= 500 || response.status === 429);
    }
    const declared = Number(response.headers.get("content-length"));
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw failed(`${declared} bytes, more than maxDownloadBytes ${maxBytes}`);
    }
    const bytes = await readCapped(response, maxBytes, failed);
    const mediaType = bareMediaType(response.headers.get("content-type") ?? undefined) ?? "application/octet-stream";
    return { mediaType, data: toBase64(bytes) };
  }
}

/** The content parts of a message (a user message's or a tool result's), or none. */
function messageParts(message: Message): readonly ContentPart[] {
  if ("role" in message) return message.role === "user" && Array.isArray(message.content) ? message.content : [];
  return message.type === "tool_result" && message.content !== undefined ? message.content : [];
}

async function readCapped(
  response: Response,
  maxBytes: number,
  failed: (why: string) => AgentError,
): Promise<Uint8Array> {
  const reader = response.body?.getReader();
  if (reader === undefined) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw failed(`more than maxDownloadBytes ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
