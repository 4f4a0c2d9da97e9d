import { realpath, stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { dirname, join } from "node:path";
import { createLogFeeds, type LogFeeds } from "./log-feed.ts";
import { excerpt, type ReadLimits } from "./log-lines.ts";
import { sendBlob } from "./blob-response.ts";
import { sendEntries } from "./entries-response.ts";
import { assets, pageHtml } from "./page/assets.ts";
import {
  createSessionLister,
  createSessionSummarizer,
  isSessionFileName,
  type SessionSummary,
} from "./session-list.ts";
import { createTokenCheck, type TokenCheck } from "./viewer-token.ts";
import type { ModelPrice } from "../model/cost.ts";

/**
 * What a viewer serves. `root`: the real path (symlinks resolved) of the log, or of the directory
 * whose `*.jsonl` files it serves; `name`: the base name the user gave.
 */
export type ViewerTarget = { kind: "file" | "directory"; root: string; name: string };

/** `GET /api/target`: what the page opens with; `prices` when the viewer was given them. */
export type TargetResponse = {
  mode: "file" | "directory";
  name: string;
  prices?: Readonly<Record<string, ModelPrice>>;
};

/** `GET /api/sessions`: the logs served. In `file` mode, `sessions` is that one log. */
export type SessionsResponse = TargetResponse & { sessions: SessionSummary[] };

/**
 * `token`: the secret every request must carry. `limits`: how much of a log one read holds.
 * `clientBufferBytes`: what an event stream may hold unsent before it waits for its client;
 * `stalledMs`: how long a stream may wait so before it is closed. `maxConnections`: connections
 * open at once; requests on one more are answered 503.
 */
export type RequestHandlerOptions = {
  pollInterval: number;
  token: string;
  limits: ReadLimits;
  clientBufferBytes: number;
  stalledMs: number;
  maxConnections: number;
  /** USD per million tokens by model id, for the page to price model calls (see `ViewerOptions.prices`). */
  prices?: Readonly<Record<string, ModelPrice>>;
};

/**
 * The viewer's HTTP routes, all GET (or HEAD):
 * - `/`: the page; `/assets/*`: its script modules and style sheet.
 * - `/api/target`: a `TargetResponse` (answered without reading any log).
 * - `/api/sessions`: a `SessionsResponse` (reads what each log got since the last call, to summarize it).
 * - `/api/entries?file=NAME`: the log read once, as a `LogUpdate` (records with line numbers, problems),
 *   sent as it is read (see `sendEntries`).
 * - `/api/blob?file=NAME&hash=HASH`: an image or file of a content part the log refers to (`blob`),
 *   from the log's blob directory (see `sendBlob`).
 * - `/api/events?file=NAME`: Server-Sent Events, `lines` events (see `LogEventHead`) with the lines
 *   of the log unparsed: the whole log first, then each change (see `followLog`). A reconnecting
 *   page gets the whole log again.
 *
 * `file` is a name listed by `/api/sessions` (optional in `file` mode); a name with a path in it, a
 * hidden or non-`.jsonl` name is refused (400), so is a symlink leading out of the directory (404).
 * Requests naming another host (`Host` header) are refused (403): a web page cannot reach the viewer
 * through a DNS name rebound to 127.0.0.1. So is every `/api/` request without the viewer's token
 * (403), in the `X-Viewer-Token` header the page sends or the `token` parameter (see `TokenCheck`);
 * a browser opening the page with the token in its query is sent to the same address with the
 * token in the fragment.
 */
export function createRequestHandler(
  target: ViewerTarget,
  options: RequestHandlerOptions,
): {
  handle: (request: IncomingMessage, response: ServerResponse) => void;
  connect: (socket: Socket) => void;
  closeStreams: () => void;
} {
  const connections = new Set<Socket>();
  const server: Server = {
    target,
    options,
    streams: new Set(),
    overflow: new WeakSet(),
    listSessions: target.kind === "directory" ? createSessionLister(target.root, options.limits) : undefined,
    summarizeTarget:
      target.kind === "file" ? createSessionSummarizer(target.root, target.name, options.limits) : undefined,
    tokens: createTokenCheck(options.token),
    feeds: createLogFeeds(options),
  };
  return {
    handle: (request, response) => {
      route(server, request, response).catch((error: unknown) => {
        if (response.headersSent) response.destroy();
        else sendJson(response, 500, { error: excerpt(error instanceof Error ? error.message : String(error), 300) });
      });
    },
    connect: (socket) => {
      if (connections.size >= options.maxConnections) return void server.overflow.add(socket);
      connections.add(socket);
      socket.once("close", () => connections.delete(socket));
    },
    closeStreams: () => {
      for (const close of [...server.streams]) close();
    },
  };
}

/**
 * What every request is served with. `streams`: a function closing each open event stream;
 * `overflow`: connections beyond `maxConnections`; `listSessions` in `directory` mode,
 * `summarizeTarget` in `file` mode.
 */
type Server = {
  target: ViewerTarget;
  options: RequestHandlerOptions;
  streams: Set<() => void>;
  overflow: WeakSet<Socket>;
  listSessions: (() => Promise<SessionSummary[]>) | undefined;
  summarizeTarget: (() => Promise<SessionSummary>) | undefined;
  tokens: TokenCheck;
  feeds: LogFeeds;
};

async function route(server: Server, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = admit(server, request, response);
  if (url === undefined) return;
  const { target, options } = server;
  if (url.pathname === "/")
    return send(response, 200, "text/html; charset=utf-8", pageHtml, {
      "content-security-policy": contentSecurityPolicy,
    });
  const asset = assets.get(url.pathname);
  if (asset !== undefined) return send(response, 200, asset.type, asset.body);
  if (url.pathname === "/api/target")
    return sendJson(response, 200, {
      mode: target.kind,
      name: target.name,
      ...(options.prices === undefined ? {} : { prices: options.prices }),
    } satisfies TargetResponse);
  if (url.pathname === "/api/sessions") return sendJson(response, 200, await sessions(server));
  if (url.pathname !== "/api/entries" && url.pathname !== "/api/events" && url.pathname !== "/api/blob")
    return sendJson(response, 404, { error: `no such page: ${url.pathname}` });

  const file = await sessionFile(target, url.searchParams.get("file"));
  if (typeof file !== "string") return sendJson(response, file.status, { error: file.error });
  if (url.pathname === "/api/entries")
    return sendEntries(response, file, options.limits, commonHeaders, request.method === "HEAD");
  if (url.pathname === "/api/blob") {
    const refused = await sendBlob(
      response,
      file,
      url.searchParams.get("hash"),
      commonHeaders,
      request.method === "HEAD",
    );
    return refused === undefined ? undefined : sendJson(response, refused.status, { error: refused.error });
  }
  streamLog(server, request, response, file);
}

/**
 * The request's URL when it may be served; otherwise undefined, the request answered: refused (a
 * connection too many, another host, a method other than GET or HEAD, an API route without the
 * token), or sent to its address with the token moved into the fragment. The page and its assets
 * hold nothing of a session and are served to anyone on a loopback host; every route that reads a
 * log needs the token.
 */
function admit(server: Server, request: IncomingMessage, response: ServerResponse): URL | undefined {
  if (server.overflow.has(request.socket)) {
    const error = `the viewer is busy: it serves ${server.options.maxConnections} connections at once`;
    return void send(response, 503, "application/json; charset=utf-8", JSON.stringify({ error }), {
      connection: "close",
      "retry-after": "5",
    });
  }
  if (!isLoopbackHostHeader(request.headers.host))
    return void sendJson(response, 403, { error: "this viewer answers only requests addressed to a loopback host" });
  if (request.method !== "GET" && request.method !== "HEAD") {
    response.setHeader("allow", "GET, HEAD");
    return void sendJson(response, 405, { error: "only GET and HEAD" });
  }
  const url = new URL(request.url ?? "/", "http://viewer.invalid");
  const proof = server.tokens.prove(request);
  const given = url.searchParams.get("token");
  if ((given !== null && proof !== "query") || (proof === "none" && !isPublic(url.pathname)))
    return void sendJson(response, 403, {
      error: "this viewer answers only requests with its token: open the address it printed (with #token=...)",
    });
  // An address with the token in its query (the older form, or typed by hand): the same address
  // with the token in the fragment, which never leaves the browser (no history, no Referer, no log).
  if (proof === "query" && url.pathname === "/" && request.headers["sec-fetch-mode"] === "navigate") {
    url.searchParams.delete("token");
    return void send(response, 303, "text/plain; charset=utf-8", "", {
      location: `${url.pathname}${url.search}#token=${given}`,
    });
  }
  return url;
}

function isPublic(pathname: string): boolean {
  return pathname === "/" || assets.has(pathname);
}

async function sessions(server: Server): Promise<SessionsResponse> {
  const { target, listSessions, summarizeTarget } = server;
  if (listSessions !== undefined) return { mode: "directory", name: target.name, sessions: await listSessions() };
  return { mode: "file", name: target.name, sessions: summarizeTarget === undefined ? [] : [await summarizeTarget()] };
}

// The path of the log `name` names, or why there is none.
async function sessionFile(
  target: ViewerTarget,
  name: string | null,
): Promise<string | { status: number; error: string }> {
  if (target.kind === "file")
    return name === null || name === target.name
      ? target.root
      : { status: 404, error: `this viewer shows only ${target.name}` };
  if (name === null) return { status: 400, error: "which session? pass ?file=NAME (a name from /api/sessions)" };
  if (!isSessionFileName(name))
    return {
      status: 400,
      error: `not a session file name: ${JSON.stringify(name)} (a *.jsonl file directly in the directory)`,
    };
  const path = await realpath(join(target.root, name)).catch(() => undefined);
  // A symlink may lead anywhere: serve only what really is in the directory.
  if (path === undefined || dirname(path) !== target.root || !(await stat(path)).isFile())
    return { status: 404, error: `no session ${JSON.stringify(name)} in this directory` };
  return path;
}

function streamLog(server: Server, request: IncomingMessage, response: ServerResponse, file: string): void {
  const { options, streams } = server;
  // A page that left while its file was looked up: its "close" has passed, so nothing would stop a watch.
  if (response.destroyed || request.socket.destroyed) return void response.destroy();
  response.writeHead(200, { ...commonHeaders, "content-type": "text/event-stream; charset=utf-8" });
  if (request.method === "HEAD") return void response.end();
  // Reconnect soon: a page whose stream broke should not stay stale for long.
  response.write("retry: 1000\n\n");
  const stop = server.feeds.stream(file, response);
  let lastDrain = Date.now();
  const drained = (): void => void (lastDrain = Date.now());
  response.on("drain", drained);
  // A comment now and then keeps proxies and idle timeouts from cutting a quiet stream. A client
  // that has read nothing for long holds a connection for nothing: it is let go.
  const heartbeat = setInterval(
    () => {
      if (response.writableLength > options.clientBufferBytes && Date.now() - lastDrain > options.stalledMs)
        response.destroy();
      else response.write(": ping\n\n");
    },
    Math.min(15_000, options.stalledMs / 2),
  );
  heartbeat.unref();
  const close = (): void => {
    stop();
    clearInterval(heartbeat);
    response.off("drain", drained);
    streams.delete(close);
    response.end();
  };
  streams.add(close);
  response.on("close", close);
}

const commonHeaders = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

// Only our own script and style: nothing from a session can run even if it slipped into the markup.
const contentSecurityPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data: blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function isLoopbackHostHeader(header: string | undefined): boolean {
  if (header === undefined) return false;
  const hostname = header.startsWith("[") ? header.slice(0, header.indexOf("]") + 1) : header.split(":")[0]!;
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  send(response, status, "application/json; charset=utf-8", JSON.stringify(body));
}

function send(
  response: ServerResponse,
  status: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, {
    ...commonHeaders,
    ...headers,
    "content-type": type,
    "content-length": Buffer.byteLength(body),
  });
  response.end(body);
}
