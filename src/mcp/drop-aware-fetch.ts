import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { messageWithCause } from "./errors.ts";

/** Called with the requests a dropped response stream left unanswered, and why. */
export type Unanswered = (ids: RequestId[], reason: string) => void;

/**
 * A `fetch` for the SDK's Streamable HTTP transport that calls `unanswered` when the SSE stream
 * answering a POST ends or breaks before it carried a response to each request of that POST: the
 * SDK would leave those requests pending until their timeout.
 *
 * A stream whose events have ids can be resumed, and the SDK then reconnects with `Last-Event-ID`
 * (a transient drop, or a server that closes streams on purpose): those requests are left to it
 * and fail only once it gives up: `maxRetries` failed reconnections (the SDK's count), a server
 * that refuses them (405), or a resumed stream that ends unanswered without an event id to resume from.
 * Nothing is reported for streams cut by closing the transport (it aborts their `signal`): the
 * SDK rejects what is still pending then.
 */
export function dropAwareFetch(maxRetries: number, unanswered: Unanswered): FetchLike {
  // Requests waiting for the SDK to resume their stream, by the event id it resumes after.
  const resuming = new Map<string, { ids: Set<RequestId>; failures: number }>();
  return async (url, init) => {
    const resumeAfter = init?.method === "GET" ? new Headers(init.headers).get("last-event-id") : null;
    const resumed = resumeAfter === null ? undefined : resuming.get(resumeAfter);
    const ids = resumed?.ids ?? (init?.method === "POST" ? requestIds(init.body) : new Set<RequestId>());
    if (ids.size === 0) return fetch(url, init);
    const closing = (): boolean => init?.signal?.aborted === true;
    const refused = (reason: string, final = false): void => {
      if (resumed === undefined || closing()) return;
      // The SDK tries again with the same event id until it has failed `maxRetries` times.
      if (!final && ++resumed.failures < maxRetries) return;
      resuming.delete(resumeAfter!);
      unanswered([...ids], `the response stream broke and resuming it failed: ${reason}`);
    };
    let response: Response;
    try {
      response = await fetch(url, init);
    } catch (error) {
      // A POST that fails rejects the SDK's send, and with it the request: only resumptions need help.
      refused(messageWithCause(error));
      throw error;
    }
    if (resumed !== undefined) {
      if (!response.ok) {
        // The SDK takes a 405 to mean "no streams to resume here" and does not try again.
        refused(`HTTP ${response.status}`, response.status === 405);
        return response;
      }
      resuming.delete(resumeAfter!);
    } else if (!response.ok || !/^text\/event-stream\b/i.test(response.headers.get("content-type") ?? "")) {
      // A JSON answer is read inside the SDK's send, which rejects the request if it breaks.
      return response;
    }
    if (response.body === null) return response;
    const ended = (lastEventId: string | undefined, error?: unknown): void => {
      if (ids.size === 0 || closing()) return;
      if (lastEventId !== undefined) {
        resuming.set(lastEventId, { ids, failures: 0 });
        return;
      }
      unanswered(
        [...ids],
        error === undefined ? "the response stream ended" : `the response stream broke: ${messageWithCause(error)}`,
      );
    };
    return new Response(watch(response.body, ids, ended), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

function requestIds(body: unknown): Set<RequestId> {
  const ids = new Set<RequestId>();
  if (typeof body !== "string") return ids;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return ids;
  }
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const { method, id } = (typeof message === "object" && message !== null ? message : {}) as {
      method?: unknown;
      id?: unknown;
    };
    if (typeof method === "string" && (typeof id === "string" || typeof id === "number")) ids.add(id);
  }
  return ids;
}

/**
 * Passes the stream through unchanged while reading its Server-Sent Events the way the SDK's
 * parser does, removing from `ids` each request a JSON-RPC response answers; `ended` gets the id of
 * the last event that had one (what the SDK resumes from) when the stream ends or breaks.
 */
function watch(
  body: ReadableStream<Uint8Array>,
  ids: Set<RequestId>,
  ended: (lastEventId: string | undefined, error?: unknown) => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  let lastEventId: string | undefined;
  let event = { id: undefined as string | undefined, type: undefined as string | undefined, data: [] as string[] };
  const line = (text: string): void => {
    if (text === "") {
      if (event.data.length > 0) {
        if (event.id) lastEventId = event.id;
        if (event.type === undefined || event.type === "message") answered(event.data.join("\n"), ids);
      }
      event = { id: undefined, type: undefined, data: [] };
      return;
    }
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon === -1 ? text : text.slice(0, colon);
    const value = colon === -1 ? "" : text.slice(text[colon + 1] === " " ? colon + 2 : colon + 1);
    if (field === "data") event.data.push(value);
    else if (field === "id" && !value.includes("\0")) event.id = value;
    else if (field === "event") event.type = value === "" ? undefined : value;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        ended(lastEventId, error);
        controller.error(error);
        return;
      }
      if (chunk.done) {
        ended(lastEventId);
        controller.close();
        return;
      }
      const text = pending + decoder.decode(chunk.value, { stream: true });
      // A "\r" at the end may be the first half of a "\r\n".
      const cut = text.endsWith("\r") ? text.length - 1 : text.length;
      const lines = text.slice(0, cut).split(/\r\n|\r|\n/);
      pending = lines.pop()! + text.slice(cut);
      lines.forEach(line);
      controller.enqueue(chunk.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

function answered(data: string, ids: Set<RequestId>): void {
  let message: unknown;
  try {
    message = JSON.parse(data);
  } catch {
    return;
  }
  if (typeof message !== "object" || message === null || "method" in message || !("id" in message)) return;
  if ("result" in message || "error" in message) ids.delete(message.id as RequestId);
}
