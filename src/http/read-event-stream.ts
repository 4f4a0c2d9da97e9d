import type { AgentEvent } from "../loop/events.ts";
import { parseSse } from "../providers/sse.ts";

export type ReadEventStreamOptions = {
  /** Called with each event's `id:` before the event is yielded: keep the last one to reconnect with `Last-Event-ID` or `?after=`. */
  onId?: (id: string) => void;
};

/**
 * The `AgentEvent`s of an event stream (`eventStreamResponse`, `createRunRegistry().response`),
 * on the client side, with the Web platform's own types only (a browser, Node, Deno, Bun). Takes
 * the `Response` of a `fetch` (or the promise of one: `readEventStream(fetch(url))`) or its body. Throws for an answer that is not a 2xx (with the
 * server's `error` message), for a `data:` line that is not JSON, and when the stream ends before
 * `run-end` (the connection was cut: reconnect after the last id to read on).
 */
export async function* readEventStream(
  source: Response | Promise<Response> | ReadableStream<Uint8Array>,
  options: ReadEventStreamOptions = {},
): AsyncGenerator<AgentEvent, void, undefined> {
  const given = await source;
  const body = given instanceof ReadableStream ? given : await checkedBody(given);
  for await (const { data, id } of parseSse(body)) {
    if (id !== undefined) options.onId?.(id);
    if (data === "") continue;
    let event: AgentEvent;
    try {
      event = JSON.parse(data) as AgentEvent;
    } catch {
      throw new Error(`readEventStream: an event's data is not JSON: ${JSON.stringify(data.slice(0, 80))}`);
    }
    yield event;
    if (event.type === "run-end") return;
  }
  throw new Error(
    "readEventStream: the stream ended before run-end (the connection was cut); reconnect after the last event id",
  );
}

async function checkedBody(response: Response): Promise<ReadableStream<Uint8Array>> {
  if (!response.ok) {
    const text = await response.text().catch(() => "");
    let message = text.slice(0, 500);
    try {
      const parsed = JSON.parse(text) as { error?: unknown };
      if (typeof parsed.error === "string") message = parsed.error;
    } catch {
      // Not JSON: the text as it is.
    }
    throw new Error(`readEventStream: the server answered ${response.status}${message === "" ? "" : `: ${message}`}`);
  }
  if (response.body === null) throw new Error("readEventStream: the response has no body");
  return response.body;
}
