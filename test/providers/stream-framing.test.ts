import { describe, expect, it } from "vitest";
import { decodeEventStream } from "../../src/providers/aws-event-stream.ts";
import { parseSse, parseSseBatches, type ServerSentEvent } from "../../src/providers/sse.ts";
import { frame } from "./event-stream-frames.ts";

const encoder = new TextEncoder();

/** A body made of `count` copies of `piece` after `head`, produced as it is read; `pulled` counts the bytes read. */
function generatedBody(
  head: Uint8Array,
  piece: Uint8Array,
  count: number,
): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  let sent = -1;
  let bytes = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (sent === count) {
          controller.close();
          return;
        }
        const chunk = sent === -1 ? head : piece;
        sent++;
        bytes += chunk.length;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
  return { body, pulled: () => bytes };
}

function bodyOf(chunks: readonly (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
}

async function events(chunks: readonly (string | Uint8Array)[]): Promise<ServerSentEvent[]> {
  const seen: ServerSentEvent[] = [];
  for await (const event of parseSse(bodyOf(chunks))) seen.push(event);
  return seen;
}

describe("SSE framing", () => {
  it("stops a 50 MB event without a line end, sent in 1 KB pieces, at its cap with a clear error, in linear time", async () => {
    const piece = new Uint8Array(1024).fill("a".charCodeAt(0));
    const { body, pulled } = generatedBody(encoder.encode("data: "), piece, 50 * 1024);
    const started = performance.now();
    const error = await (async () => {
      for await (const _batch of parseSseBatches(body)) expect.unreachable("no event can be complete");
    })().catch((thrown: unknown) => thrown);
    const elapsedMs = performance.now() - started;
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/server-sent event is longer than 16777216 characters/);
    // It read a little past the cap, not the whole 50 MB.
    expect(pulled()).toBeLessThan(17 * 1024 * 1024);
    // A rescan per piece would take minutes here; a linear parse takes well under a second.
    expect(elapsedMs).toBeLessThan(20_000);
  }, 30_000);

  it("caps an event made of many data lines too, and honours a smaller cap", async () => {
    const error = await (async () => {
      for await (const _event of parseSse(bodyOf(["data: 0123456789\n".repeat(200)]), { maxEventLength: 1000 }))
        expect.unreachable("the event is over its cap");
    })().catch((thrown: unknown) => thrown);
    expect((error as Error).message).toMatch(/longer than 1000 characters/);
  });

  it("reads the same events however the bytes are split: CRLF, CR and LF line ends, multi-byte characters, a last event without its blank line", async () => {
    const text =
      'event: first\r\ndata: {"a":"é😀"}\r\n\r\n: a comment\rdata: line one\rdata: line two\r\rdata:no space\n\nid: 7\nretry: 10\ndata: last';
    const whole = await events([text]);
    expect(whole).toStrictEqual([
      { event: "first", data: '{"a":"é😀"}' },
      { event: undefined, data: "line one\nline two" },
      { event: undefined, data: "no space" },
      { event: undefined, data: "last", id: "7" },
    ]);
    const bytes = encoder.encode(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(await events([bytes.subarray(0, cut), bytes.subarray(cut)])).toStrictEqual(whole);
    }
    expect(await events([...bytes].map((byte) => new Uint8Array([byte])))).toStrictEqual(whole);
  });
});

// One event message of the AWS event stream encoding, built independently of the decoder.
function eventMessage(payload: Uint8Array): Uint8Array {
  return frame({ ":message-type": "event" }, payload);
}

describe("AWS event stream framing", () => {
  it("decodes a 15 MB message sent in 1 KB pieces in linear time (each byte copied once, not once per piece)", async () => {
    const payload = new Uint8Array(15 * 1024 * 1024).fill(120);
    const message = eventMessage(payload);
    const pieces: Uint8Array[] = [];
    for (let at = 0; at < message.length; at += 1024) pieces.push(message.subarray(at, at + 1024));
    const started = performance.now();
    const decoded: Uint8Array[] = [];
    for await (const batch of decodeEventStream(bodyOf(pieces))) for (const frame of batch) decoded.push(frame.payload);
    const elapsedMs = performance.now() - started;
    expect(decoded).toHaveLength(1);
    expect(decoded[0]!.length).toBe(payload.length);
    expect(decoded[0]!.every((byte) => byte === 120)).toBe(true);
    expect(elapsedMs).toBeLessThan(20_000);
  }, 30_000);

  it("decodes messages split at every byte boundary, and several in one piece", async () => {
    const messages = ["one", "two", "three"].map((text) => eventMessage(encoder.encode(JSON.stringify({ text }))));
    const all = new Uint8Array(messages.reduce((sum, message) => sum + message.length, 0));
    let at = 0;
    for (const message of messages) {
      all.set(message, at);
      at += message.length;
    }
    const read = async (pieces: Uint8Array[]): Promise<string[]> => {
      const texts: string[] = [];
      for await (const batch of decodeEventStream(bodyOf(pieces)))
        for (const frame of batch) texts.push(new TextDecoder().decode(frame.payload));
      return texts;
    };
    const expected = ['{"text":"one"}', '{"text":"two"}', '{"text":"three"}'];
    expect(await read([all])).toStrictEqual(expected);
    for (let cut = 1; cut < all.length; cut++)
      expect(await read([all.subarray(0, cut), all.subarray(cut)])).toStrictEqual(expected);
    expect(await read([...all].map((byte) => new Uint8Array([byte])))).toStrictEqual(expected);
  });
});
