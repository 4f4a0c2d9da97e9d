import { defaultHeartbeatMs, encodeEvent, eventStreamHeaders, heartbeat } from "./event-stream-format.ts";
import { createSendBuffer, type SendBuffer } from "./send-buffer.ts";
import { checkFreshStream } from "./fresh-stream.ts";
import type { AgentEvent } from "../loop/events.ts";
import type { AgentStream } from "../loop/loop.ts";
import { checkBoolean, checkNumber, maxTimerDelay } from "../numeric-options.ts";

export type EventStreamOptions = {
  /**
   * Keep the run going when the client goes away (its events are then read to the end and
   * dropped; re-attach through `createRunRegistry`, or read the stored session). Default false:
   * a client that disconnects aborts the run, as `stream.abort()` does.
   */
  detach?: boolean;
  /**
   * The request's signal: its abort counts as the client going away (servers report a disconnect
   * by cancelling the body, by this signal, or both).
   */
  signal?: AbortSignal;
  /** More response headers (the event-stream ones are always set). */
  headers?: ConstructorParameters<typeof Headers>[0];
  /** Send a comment line after this long without an event (ms, default 15 000), so idle proxies keep the stream open; 0: never. */
  heartbeatMs?: number;
  /**
   * The most bytes held for a client that reads slower than the run produces (default 1 MiB):
   * past it, deltas and progress updates are dropped for that client (each `message` event still
   * carries the whole text); messages, tool ends and `run-end` are always sent.
   */
  maxBufferedBytes?: number;
};

/** The default of `EventStreamOptions.maxBufferedBytes`. */
export const defaultMaxBufferedBytes = 1024 * 1024;

/**
 * A Web `Response` that streams the run's events as server-sent events: each event one `id:` (its
 * sequence number in the run, from 1) and one `data:` line of JSON, the last one `run-end`. The
 * run is read from now on, whether or not the client reads. A client that disconnects aborts the
 * run (every call still answered, the session valid), unless `detach` is set.
 */
export function eventStreamResponse(stream: AgentStream, options: EventStreamOptions = {}): Response {
  checkNumber("heartbeatMs", options.heartbeatMs, { min: 0, max: maxTimerDelay });
  checkNumber("maxBufferedBytes", options.maxBufferedBytes, { min: 0, infinity: true });
  checkBoolean("detach", options.detach);
  checkFreshStream(stream, "eventStreamResponse");
  const { buffer, body } = clientBody(stream, options, options.maxBufferedBytes ?? defaultMaxBufferedBytes);
  void pump(stream, buffer);
  const headers = new Headers(options.headers);
  for (const [name, value] of Object.entries(eventStreamHeaders)) headers.set(name, value);
  return new Response(body, { headers });
}

/**
 * The buffer a run's bytes wait in for one client (dropping past `bufferBytes`, see `SendBuffer`)
 * and the body that sends them; the client leaving (the body cancelled, `options.signal`) clears
 * the buffer and aborts the run unless `options.detach`.
 */
export function clientBody(
  stream: AgentStream,
  options: EventStreamOptions,
  bufferBytes: number,
): { buffer: SendBuffer; body: ReadableStream<Uint8Array> } {
  const buffer = createSendBuffer(bufferBytes);
  let gone = false;
  const leave = (): void => {
    if (gone) return;
    gone = true;
    buffer.clear();
    if (options.detach !== true) stream.abort("the client disconnected");
  };
  options.signal?.addEventListener("abort", leave, { once: true });
  return { buffer, body: bufferBody(buffer, options.heartbeatMs ?? defaultHeartbeatMs, leave) };
}

// Reads the run to its end, whoever listens; a cleared buffer ignores what comes after.
async function pump(stream: AgentStream, buffer: SendBuffer): Promise<void> {
  let id = 0;
  try {
    for (;;) {
      const next = await stream.next();
      if (next.done === true) break;
      buffer.push(encodeEvent(++id, next.value), droppable(next.value));
    }
  } catch {
    // The run's error was already sent as its `run-end` event; the stream rethrows it after.
  } finally {
    buffer.end();
  }
}

/** Events a client may miss without losing anything: the `message` that follows holds what they carried. */
export function droppable(event: AgentEvent): boolean {
  return (
    event.type === "text-delta" ||
    event.type === "thinking-delta" ||
    event.type === "tool-call-delta" ||
    event.type === "tool-execution-update"
  );
}

/** A body that sends what the buffer holds as the client reads, with a heartbeat while idle. */
function bufferBody(buffer: SendBuffer, heartbeatMs: number, leave: () => void): ReadableStream<Uint8Array> {
  let timer: ReturnType<typeof setInterval> | undefined;
  const stopHeartbeat = (): void => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
  };
  return new ReadableStream<Uint8Array>(
    {
      start() {
        if (heartbeatMs === 0) return;
        timer = setInterval(() => {
          if (buffer.idle()) buffer.push(heartbeat, false);
        }, heartbeatMs);
        // Node would otherwise stay up for an idle stream; other runtimes have no `unref`.
        (timer as { unref?: () => void }).unref?.();
      },
      async pull(controller) {
        const chunk = await buffer.take();
        if (chunk !== undefined) return controller.enqueue(chunk);
        stopHeartbeat();
        controller.close();
      },
      cancel() {
        stopHeartbeat();
        leave();
      },
    },
    { highWaterMark: 0 },
  );
}
