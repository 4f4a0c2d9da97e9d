// The fixture MCP server over Streamable HTTP on 127.0.0.1 (port 0), one McpServer per session as
// the SDK's stateful example does. It records what reached it, for tests that check what did not.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { InMemoryEventStore } from "@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createFixtureServer } from "./fixture-tools.ts";

export type HttpFixture = {
  url: string;
  /** The JSON-RPC method of every message POSTed, in arrival order. */
  methods: string[];
  /** The headers of every request. */
  headers: IncomingHttpHeaders[];
  /** The HTTP method of every request (`POST`, `GET`, `DELETE`), in arrival order. */
  requests: string[];
  /** How many MCP sessions the server holds open. */
  sessions: () => number;
  /** The McpServer of each session (each stateless request), in the order they were made. */
  servers: McpServer[];
  close: () => Promise<void>;
};

export type HttpFixtureOptions = {
  /** Keep events so clients can resume a dropped stream (`Last-Event-ID`); retry after 100 ms. */
  resumable?: boolean;
  /** Makes the McpServer of each session (default: the fixture's). */
  create?: () => McpServer;
  /**
   * No sessions: no `Mcp-Session-Id`, a new server for each POST, GET and DELETE answered 405 (the
   * SDK's stateless example).
   */
  stateless?: boolean;
};

export async function startHttpServer(options: HttpFixtureOptions = {}): Promise<HttpFixture> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const methods: string[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const requests: string[] = [];
  const servers: McpServer[] = [];
  const create = (): McpServer => {
    const server = (options.create ?? createFixtureServer)();
    servers.push(server);
    return server;
  };
  const http = createServer((request, response) => {
    headers.push(request.headers);
    requests.push(request.method ?? "");
    if (options.stateless === true && request.method !== "POST")
      return void response.writeHead(405, { allow: "POST" }).end();
    void handle(request).then(
      async ({ transport, body }) => {
        // The stream of the answer ends at once, as a proxy that drops it would end it.
        if (callsTool(body, "hangup"))
          return void response.writeHead(200, { "content-type": "text/event-stream" }).end();
        return transport?.handleRequest(request, response, body) ?? response.writeHead(404).end();
      },
      () => response.writeHead(500).end(),
    );
  });

  async function handle(
    request: IncomingMessage,
  ): Promise<{ transport: StreamableHTTPServerTransport | undefined; body: unknown }> {
    const body = request.method === "POST" ? await readJson(request) : undefined;
    for (const message of Array.isArray(body) ? body : [body]) {
      if (typeof message === "object" && message !== null && "method" in message) methods.push(String(message.method));
    }
    if (options.stateless === true) {
      const transport = new StreamableHTTPServerTransport({});
      await create().connect(transport);
      return { transport, body };
    }
    const sessionId = request.headers["mcp-session-id"];
    if (typeof sessionId === "string") return { transport: transports.get(sessionId), body };
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void transports.set(id, transport),
      ...(options.resumable === true ? { eventStore: new InMemoryEventStore(), retryInterval: 100 } : {}),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) transports.delete(transport.sessionId);
    };
    await create().connect(transport);
    return { transport, body };
  }

  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    methods,
    headers,
    requests,
    sessions: () => transports.size,
    servers,
    close: async () => {
      await Promise.all([...transports.values()].map((transport) => transport.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function callsTool(body: unknown, name: string): boolean {
  const { method, params } = (typeof body === "object" && body !== null ? body : {}) as {
    method?: unknown;
    params?: { name?: unknown };
  };
  return method === "tools/call" && params?.name === name;
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}
