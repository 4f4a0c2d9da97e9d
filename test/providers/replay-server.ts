import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One scripted HTTP response. */
export type ReplayResponse = {
  status?: number;
  headers?: Record<string, string>;
  /** The body as written, in one piece. */
  body?: string | Uint8Array;
  /** Or the body in pieces, written `chunkDelayMs` apart (a real stream). */
  chunks?: (string | Uint8Array)[];
  chunkDelayMs?: number;
  /** Cut the connection after this many chunks, without ending the response (a failure mid-stream). */
  destroyAfterChunks?: number;
  /** Send headers and the chunks, then never finish (to test abort). */
  hang?: boolean;
  /** Accept the request and never answer, not even the headers (a stalled server). */
  stallBeforeHeaders?: boolean;
};

export type RecordedRequest = {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: unknown;
  /** Set when the client went away before the response ended (an abort reached the server). */
  clientClosed: boolean;
};

export type ReplayServer = {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  requests: RecordedRequest[];
  /** Queues responses, served in order, one per request. */
  enqueue: (...responses: ReplayResponse[]) => void;
  /** Forgets the recorded requests and drops responses still queued (a failed test's leftovers). */
  reset: () => void;
  close: () => Promise<void>;
};

/** A local HTTP server that replays scripted (or recorded) provider responses and records each request. */
export async function startReplayServer(): Promise<ReplayServer> {
  const queue: ReplayResponse[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((request, reply) => void serve(request, reply));
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function serve(request: IncomingMessage, reply: ServerResponse): Promise<void> {
    const raw = await readBody(request);
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch {
      // keep the text
    }
    const recorded: RecordedRequest = {
      method: request.method ?? "",
      url: request.url ?? "",
      headers: request.headers,
      body,
      clientClosed: false,
    };
    requests.push(recorded);
    reply.on("close", () => {
      if (!reply.writableFinished) recorded.clientClosed = true;
    });
    const next = queue.shift();
    if (next === undefined) {
      reply
        .writeHead(500, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { message: "replay server: no response queued" } }));
      return;
    }
    if (next.stallBeforeHeaders === true) return;
    reply.writeHead(next.status ?? 200, next.headers ?? { "content-type": "application/json" });
    const chunks = next.chunks ?? (next.body === undefined ? [] : [next.body]);
    for (const [index, chunk] of chunks.entries()) {
      if (next.destroyAfterChunks !== undefined && index >= next.destroyAfterChunks) {
        reply.destroy();
        return;
      }
      if (reply.destroyed) return;
      reply.write(chunk);
      if (next.chunkDelayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, next.chunkDelayMs));
    }
    if (next.destroyAfterChunks !== undefined) {
      reply.destroy();
      return;
    }
    if (!next.hang) reply.end();
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...responses) => queue.push(...responses),
    reset: () => {
      requests.length = 0;
      queue.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    request.on("data", (part: Buffer) => parts.push(part));
    request.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    request.on("error", reject);
  });
}

/** An SSE body from JSON payloads: `event: <type>` lines when `withEventNames`, then `data:`. */
export function sse(
  payloads: readonly unknown[],
  options: { withEventNames?: boolean; done?: boolean } = {},
): string[] {
  const events = payloads.map((payload) => {
    const type = (payload as { type?: unknown }).type;
    const name = options.withEventNames === true && typeof type === "string" ? `event: ${type}\n` : "";
    return `${name}data: ${JSON.stringify(payload)}\n\n`;
  });
  if (options.done === true) events.push("data: [DONE]\n\n");
  return events;
}

export const sseHeaders = { "content-type": "text/event-stream" };

/** Raw `data:` payloads (not necessarily JSON) as an SSE response. */
export function rawSse(payloads: readonly string[]): ReplayResponse {
  return { headers: sseHeaders, chunks: payloads.map((payload) => `data: ${payload}\n\n`) };
}
