/** A header value of the AWS event stream encoding, by its wire type. */
export type EventStreamHeaderValue = boolean | number | bigint | string | Uint8Array | Date;

/** One message of an `application/vnd.amazon.eventstream` body. */
export type EventStreamMessage = {
  /** E.g. `:message-type` (`event`, `exception` or `error`), `:event-type`, `:exception-type`. */
  headers: Record<string, EventStreamHeaderValue>;
  payload: Uint8Array;
};

/**
 * Decodes a body in the AWS event stream encoding, one array of messages per network chunk (a
 * message split across chunks waits for its end). Each message is a prelude (total length and
 * headers length, big-endian uint32, then the prelude's CRC32), the headers, the payload and the
 * CRC32 of everything before it. Throws on a checksum mismatch or an impossible length: the bytes
 * were damaged on the way, and nothing after that point can be trusted. Bytes left over at the end
 * of the body (a cut connection) are not a message and are dropped without error; the caller
 * decides whether the stream was complete.
 */
export async function* decodeEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<EventStreamMessage[]> {
  const reader = body.getReader();
  // Chunks not decoded yet, joined only once they hold the bytes the next step needs: a message
  // arriving in many small chunks is copied once, not once per chunk.
  const pending: Uint8Array[] = [];
  let pendingLength = 0;
  let needed = preludeLength;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      pending.push(value);
      pendingLength += value.length;
      if (pendingLength < needed) continue;
      const buffer = pending.length === 1 ? pending[0]! : concat(pending, pendingLength);
      const batch: EventStreamMessage[] = [];
      let offset = 0;
      needed = preludeLength;
      while (buffer.length - offset >= preludeLength) {
        const view = new DataView(buffer.buffer, buffer.byteOffset + offset, buffer.length - offset);
        const totalLength = view.getUint32(0);
        const headersLength = view.getUint32(4);
        if (crc32(buffer.subarray(offset, offset + 8)) !== view.getUint32(8))
          throw new Error("event stream: prelude checksum mismatch");
        if (totalLength < minimumLength || totalLength > maximumLength || headersLength > totalLength - minimumLength) {
          throw new Error(`event stream: impossible message length ${totalLength}`);
        }
        if (buffer.length - offset < totalLength) {
          needed = totalLength;
          break;
        }
        const message = buffer.subarray(offset, offset + totalLength);
        if (crc32(message.subarray(0, totalLength - 4)) !== view.getUint32(totalLength - 4))
          throw new Error("event stream: message checksum mismatch");
        batch.push({
          headers: decodeHeaders(message.subarray(preludeLength, preludeLength + headersLength)),
          payload: message.subarray(preludeLength + headersLength, totalLength - 4),
        });
        offset += totalLength;
      }
      pending.length = 0;
      pendingLength = buffer.length - offset;
      if (pendingLength > 0) pending.push(buffer.subarray(offset));
      if (batch.length > 0) yield batch;
    }
  } finally {
    reader.releaseLock();
    // Stopping early (abort, a failed turn) closes the connection instead of leaving it open.
    await body.cancel().catch(() => undefined);
  }
}

const preludeLength = 12;
// Prelude plus the message CRC; the service caps a message at 16 MiB.
const minimumLength = preludeLength + 4;
const maximumLength = 16 * 1024 * 1024;

function concat(pieces: readonly Uint8Array[], length: number): Uint8Array {
  const joined = new Uint8Array(length);
  let at = 0;
  for (const piece of pieces) {
    joined.set(piece, at);
    at += piece.length;
  }
  return joined;
}

const textDecoder = new TextDecoder();

function decodeHeaders(bytes: Uint8Array): Record<string, EventStreamHeaderValue> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const headers: Record<string, EventStreamHeaderValue> = {};
  let at = 0;
  const take = (length: number): Uint8Array => {
    if (at + length > bytes.length) throw new Error("event stream: header runs past its message");
    const slice = bytes.subarray(at, at + length);
    at += length;
    return slice;
  };
  while (at < bytes.length) {
    const name = textDecoder.decode(take(view.getUint8(at++)));
    const type = view.getUint8(at++);
    switch (type) {
      case 0:
        headers[name] = true;
        break;
      case 1:
        headers[name] = false;
        break;
      case 2:
        headers[name] = view.getInt8(at);
        at += 1;
        break;
      case 3:
        headers[name] = view.getInt16(at);
        at += 2;
        break;
      case 4:
        headers[name] = view.getInt32(at);
        at += 4;
        break;
      case 5:
        headers[name] = view.getBigInt64(at);
        at += 8;
        break;
      case 6:
      case 7: {
        const length = view.getUint16(at);
        at += 2;
        const value = take(length);
        headers[name] = type === 7 ? textDecoder.decode(value) : value;
        break;
      }
      case 8:
        headers[name] = new Date(Number(view.getBigInt64(at)));
        at += 8;
        break;
      case 9:
        headers[name] = take(16);
        break;
      default:
        throw new Error(`event stream: unknown header type ${type}`);
    }
  }
  return headers;
}

/** CRC-32 (IEEE 802.3, the zlib one), as the event stream encoding uses it. */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (let index = 0; index < bytes.length; index++) crc = crcTable[(crc ^ bytes[index]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const crcTable = (() => {
  const table = new Uint32Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let value = byte;
    for (let bit = 0; bit < 8; bit++) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1;
    table[byte] = value >>> 0;
  }
  return table;
})();
