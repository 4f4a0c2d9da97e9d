import { crc32 } from "node:zlib";

// The AWS event stream encoding, written independently of the adapter's decoder (zlib's CRC32).
export function frame(headers: Record<string, string>, payload: string | Uint8Array): Uint8Array {
  const headerBytes = Buffer.concat(
    Object.entries(headers).map(([name, value]) => {
      const nameBytes = Buffer.from(name);
      const valueBytes = Buffer.from(value);
      const header = Buffer.alloc(4 + nameBytes.length + valueBytes.length);
      header.writeUInt8(nameBytes.length, 0);
      nameBytes.copy(header, 1);
      header.writeUInt8(7, 1 + nameBytes.length); // string
      header.writeUInt16BE(valueBytes.length, 2 + nameBytes.length);
      valueBytes.copy(header, 4 + nameBytes.length);
      return header;
    }),
  );
  const body =
    typeof payload === "string"
      ? Buffer.from(payload)
      : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  const total = 12 + headerBytes.length + body.length + 4;
  const message = Buffer.alloc(total);
  message.writeUInt32BE(total, 0);
  message.writeUInt32BE(headerBytes.length, 4);
  message.writeUInt32BE(crc32(message.subarray(0, 8)), 8);
  headerBytes.copy(message, 12);
  body.copy(message, 12 + headerBytes.length);
  message.writeUInt32BE(crc32(message.subarray(0, total - 4)), total - 4);
  return new Uint8Array(message);
}

/** Decoded events (`{ eventType: payload }`, the chunks-file form) as event stream frames. */
export function eventFrames(events: readonly Record<string, unknown>[]): Uint8Array[] {
  return events.map((event) => {
    const [type, payload] = Object.entries(event)[0]!;
    return frame(
      { ":event-type": type, ":content-type": "application/json", ":message-type": "event" },
      JSON.stringify(payload),
    );
  });
}
