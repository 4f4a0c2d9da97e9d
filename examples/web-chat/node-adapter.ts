// Web Request/Response over node:http: the few lines a Node server (or Express) needs to use
// simple-agent-loop/http. Runtimes that speak Request/Response themselves (Bun, Deno, Hono,
// Next.js route handlers) need none of this.
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";

/** The incoming request as a Web `Request` whose signal aborts when the client goes away. */
export function toWebRequest(incoming: IncomingMessage, outgoing: ServerResponse, origin: string): Request {
  const controller = new AbortController();
  outgoing.on("close", () => controller.abort());
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers))
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  const method = incoming.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(new URL(incoming.url ?? "/", origin), {
    method,
    headers,
    signal: controller.signal,
    ...(hasBody ? { body: Readable.toWeb(incoming) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
  });
}

/** Sends a Web `Response`, streaming its body with backpressure; a client that leaves cancels the body. */
export async function sendWebResponse(response: Response, outgoing: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  outgoing.writeHead(response.status, headers);
  if (response.body === null) {
    outgoing.end();
    return;
  }
  await pipeline(Readable.fromWeb(response.body), outgoing).catch(() => undefined);
}
