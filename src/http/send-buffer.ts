/**
 * The bytes waiting for one slow client, bounded. Events come from a run that never waits for a
 * client, so what the client has not read yet is held here: `push` keeps every event that changes
 * what a page shows (a message, a tool's end, `run-end`), and drops a droppable one (a delta, a
 * progress update: the `message` that follows carries the whole of it) while more than
 * `maxBytes` wait. So a client that reads slowly, or not at all, costs at most `maxBytes` plus
 * the run's own messages.
 */
export type SendBuffer = {
  push: (bytes: Uint8Array, droppable: boolean) => void;
  /** Everything waiting, as one chunk, once there is something; `undefined` once ended and drained. */
  take: () => Promise<Uint8Array | undefined>;
  /** Whether nothing waits (a heartbeat is only worth sending then). */
  idle: () => boolean;
  /** How many bytes wait for the client. */
  waitingBytes: () => number;
  /** No more pushes; `take` drains what waits, then answers `undefined`. */
  end: () => void;
  /** Drops what waits and ends: the client is gone. */
  clear: () => void;
  /** How many droppable events were dropped so far. */
  dropped: () => number;
};

export function createSendBuffer(maxBytes: number): SendBuffer {
  let chunks: Uint8Array[] = [];
  let bytes = 0;
  let ended = false;
  let dropped = 0;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    const waiting = wake;
    wake = undefined;
    waiting?.();
  };
  return {
    push: (chunk, droppable) => {
      if (ended) return;
      if (droppable && bytes + chunk.byteLength > maxBytes) {
        dropped++;
        return;
      }
      chunks.push(chunk);
      bytes += chunk.byteLength;
      notify();
    },
    take: async () => {
      while (chunks.length === 0 && !ended) await new Promise<void>((resolve) => (wake = resolve));
      if (chunks.length === 0) return undefined;
      const taken = concatenate(chunks, bytes);
      chunks = [];
      bytes = 0;
      return taken;
    },
    idle: () => chunks.length === 0,
    waitingBytes: () => bytes,
    end: () => {
      ended = true;
      notify();
    },
    clear: () => {
      chunks = [];
      bytes = 0;
      ended = true;
      notify();
    },
    dropped: () => dropped,
  };
}

/** Several chunks as one (one write to the socket instead of many small ones). */
export function concatenate(chunks: readonly Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const joined = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return joined;
}
