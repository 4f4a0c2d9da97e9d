import { clientBody, defaultMaxBufferedBytes, type EventStreamOptions } from "./event-stream-response.ts";
import type { SendBuffer } from "./send-buffer.ts";
import { checkFreshStream } from "./fresh-stream.ts";
import { createUiChunkConverter, type UiChunkConverter, type UiMessageChunk } from "./ui-message-chunks.ts";
import type { AgentStream } from "../loop/loop.ts";
import { AgentError, describeValue } from "../errors.ts";
import { checkBoolean, checkNumber, maxTimerDelay } from "../numeric-options.ts";

export type UiMessageStreamOptions = EventStreamOptions & {
  /** The id of the assistant message the stream builds (the `start` part's `messageId`); the client makes one without it. */
  messageId?: string;
};

/**
 * The protocol version this module speaks, sent as the `x-vercel-ai-ui-message-stream` header: the
 * one `ai` 6 and 7 (and `@ai-sdk/react` 3 and 4, their `useChat`) read.
 */
export const uiMessageStreamVersion = "v1";

/**
 * A Web `Response` that streams the run in the AI SDK's UI message stream protocol, so a page built
 * on the AI SDK's `useChat` (through its default chat transport) reads a simple-agent-loop run
 * unchanged: `start`, a `start-step`/`finish-step` per model turn, text and reasoning as
 * start/delta/end, tool calls as input start/delta/available then output available, error or
 * denied (a call a human denied through `resolveApproval`), a
 * tool waiting for approval as `tool-approval-request` (its `approvalId` is the call's id), then
 * `finish` (`stop`; `tool-calls` when paused for approval), `abort`, or `error`, and `[DONE]`.
 * Disconnects and slow clients as in `eventStreamResponse`: a slow client's deltas are held back
 * past `maxBufferedBytes` and sent whole when their message completes them.
 */
export function uiMessageStreamResponse(stream: AgentStream, options: UiMessageStreamOptions = {}): Response {
  checkNumber("heartbeatMs", options.heartbeatMs, { min: 0, max: maxTimerDelay });
  checkNumber("maxBufferedBytes", options.maxBufferedBytes, { min: 0, infinity: true });
  checkBoolean("detach", options.detach);
  if (options.messageId !== undefined && typeof options.messageId !== "string")
    throw new AgentError(`messageId must be a string; got ${describeValue(options.messageId)}`);
  checkFreshStream(stream, "uiMessageStreamResponse");
  const maxBytes = options.maxBufferedBytes ?? defaultMaxBufferedBytes;
  // The buffer itself never drops: the converter holds deltas back and completes them.
  const { buffer, body } = clientBody(stream, options, Number.POSITIVE_INFINITY);
  const converter = createUiChunkConverter({
    session: stream.session,
    ...(options.messageId === undefined ? {} : { messageId: options.messageId }),
  });
  void pumpChunks(stream, buffer, converter, maxBytes);
  const headers = new Headers(options.headers);
  headers.set("content-type", "text/event-stream; charset=utf-8");
  headers.set("cache-control", "no-cache, no-transform");
  headers.set("x-accel-buffering", "no");
  headers.set("x-vercel-ai-ui-message-stream", uiMessageStreamVersion);
  return new Response(body, { headers });
}

const encoder = new TextEncoder();

function encodeChunk(chunk: UiMessageChunk | "[DONE]"): Uint8Array {
  return encoder.encode(`data: ${chunk === "[DONE]" ? chunk : JSON.stringify(chunk)}\n\n`);
}

// Past `maxBytes` waiting, the converter holds deltas back (and completes them at their message).
async function pumpChunks(
  stream: AgentStream,
  buffer: SendBuffer,
  converter: UiChunkConverter,
  maxBytes: number,
): Promise<void> {
  let ended = false;
  try {
    for (;;) {
      const next = await stream.next();
      if (next.done === true) break;
      if (next.value.type === "run-end") ended = true;
      for (const chunk of converter(next.value, buffer.waitingBytes() > maxBytes))
        buffer.push(encodeChunk(chunk), false);
    }
  } catch (error) {
    if (!ended) buffer.push(encodeChunk({ type: "error", errorText: String(error) }), false);
  } finally {
    buffer.push(encodeChunk("[DONE]"), false);
    buffer.end();
  }
}
