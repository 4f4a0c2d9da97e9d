import { realpath, stat } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { basename, resolve } from "node:path";
import { AgentError, describeValue } from "../errors.ts";
import type { ModelPrice } from "../model/cost.ts";
import { checkNumber, maxTimerDelay } from "../numeric-options.ts";
import { defaultReadLimits } from "./log-lines.ts";
import { createRequestHandler, type ViewerTarget } from "./request-handler.ts";
import { isValidViewerToken, newViewerToken } from "./viewer-token.ts";

export type ViewerOptions = {
  /** The TCP port to listen on. Default 0: any free port (read it from `url`). */
  port?: number;
  /**
   * The loopback address to listen on: `"127.0.0.1"` (default), another `127.x.y.z`, `"::1"` or
   * `"localhost"`. Anything else throws: session logs hold prompts, tool output and maybe secrets,
   * so the viewer is never reachable from another machine (forward the port instead: `ssh -L`).
   */
  host?: string;
  /**
   * How often (ms) an open session's log is checked for changes, besides `fs.watch` (which misses
   * them on network file systems and when a file is replaced). Default 1000.
   */
  pollInterval?: number;
  /**
   * The secret every request must carry (16 to 256 characters from A-Z, a-z, 0-9, "_" and "-").
   * Default: a new random one per run. Any local user can connect to a loopback port, and session
   * logs are private: `url` holds the token in its fragment, and the page keeps it in its origin's
   * storage and sends it in a header (never a cookie, which every port of the host would get).
   */
  token?: string;
  /**
   * Connections served at once (default 32; a browser page uses one or two). Requests on more get
   * 503. Each event stream holds at most about 2 MB that its client has not read yet (then it
   * waits for the client; one that reads nothing for a minute is closed), so this bounds memory.
   */
  maxConnections?: number;
  /**
   * The longest log line read, in bytes (default 16 MiB). A longer line is not shown: the page
   * names it as a problem, and the rest of the log shows.
   */
  maxLineBytes?: number;
  /**
   * Prices in USD per million tokens by model id (as the loop's `prices` option takes them, e.g.
   * `modelPrices` of `simple-agent-loop/prices`): the page then shows what each model call, turn
   * and the session cost, by the model recorded on each turn. Without them it shows tokens only.
   */
  prices?: Readonly<Record<string, ModelPrice>>;
};

/** A running viewer. */
export type Viewer = {
  /**
   * The page's address with the token in its fragment, e.g. `http://127.0.0.1:41234/#token=...`:
   * open this one. (Scripts send the token as the `X-Viewer-Token` header or a `token` parameter.)
   */
  url: string;
  /** The token requests must carry (the `token` of `url`'s fragment). */
  token: string;
  /** Stops the server: ends the pages' live streams, stops watching files, closes every connection. */
  close: () => Promise<void>;
};

/**
 * Serves a local web page showing the session log at `path` (a `*.jsonl` file written by
 * `openSession` or `fileStore`), or listing the logs directly in the directory at `path`, newest
 * first, each opening its session. The page shows the session as a timeline of turns (messages,
 * thinking, tool calls with their input, result, errors and durations, approvals, compactions,
 * stop reasons) under a chart of tokens and time per turn, and follows the log live while an agent
 * writes it. Only the given file, or `*.jsonl` files directly in the given directory, are served.
 *
 * Every request that reads a log must carry the viewer's token (see `ViewerOptions.token`); others get 403.
 *
 * Resolves once listening. Throws an `AgentError` when `path` does not exist, `host` is not a
 * loopback address or `token` is not valid; rejects with the server's error when the port is taken.
 */
export async function serveViewer(path: string, options: ViewerOptions = {}): Promise<Viewer> {
  if (typeof path !== "string") throw new AgentError(`serveViewer: path must be a string; got ${describeValue(path)}`);
  checkViewerOptions(options);
  const host = loopbackHost(options.host ?? "127.0.0.1");
  const port = options.port ?? 0;
  const pollInterval = options.pollInterval ?? 1000;
  const maxConnections = options.maxConnections ?? 32;
  const maxLineBytes = options.maxLineBytes ?? defaultReadLimits.maxLineBytes;
  const token = options.token ?? newViewerToken();
  if (typeof token !== "string" || !isValidViewerToken(token))
    throw new AgentError('serveViewer: token must be 16 to 256 characters from A-Z, a-z, 0-9, "_" and "-"');
  const target = await resolveTarget(path);

  const handler = createRequestHandler(target, {
    pollInterval,
    token,
    maxConnections,
    limits: { ...defaultReadLimits, maxLineBytes },
    clientBufferBytes: 1024 * 1024,
    stalledMs: 60_000,
    ...(options.prices === undefined ? {} : { prices: options.prices }),
  });
  const server = createServer(handler.handle);
  server.on("connection", handler.connect);
  // A connection that never finishes its request must not hold its place for long.
  server.headersTimeout = 20_000;
  server.requestTimeout = 30_000;
  await listen(server, port, host);
  const { port: bound } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${bound}/#token=${token}`,
    token,
    close: () =>
      (closing ??= new Promise<void>((done) => {
        handler.closeStreams();
        server.close(() => done());
        server.closeAllConnections();
      })),
  };
}

// Every option by the rules the loop's own follow: a `true`, a "1" or a [1000] is refused, not coerced.
function checkViewerOptions(options: ViewerOptions): void {
  if (typeof options !== "object" || options === null)
    throw new AgentError(`serveViewer: options must be an object; got ${describeValue(options)}`);
  checkNumber("serveViewer: port", options.port, { min: 0, max: 65_535, integer: true });
  checkNumber("serveViewer: pollInterval", options.pollInterval, { min: 0, exclusive: true, max: maxTimerDelay });
  checkNumber("serveViewer: maxConnections", options.maxConnections, { min: 1, integer: true, max: 65_535 });
  checkNumber("serveViewer: maxLineBytes", options.maxLineBytes, { min: 1, integer: true, max: 2 ** 31 - 1 });
  const { prices } = options;
  if (prices === undefined) return;
  if (typeof prices !== "object" || prices === null || Array.isArray(prices))
    throw new AgentError(`serveViewer: prices must be an object of prices by model id; got ${describeValue(prices)}`);
  for (const [model, price] of Object.entries(prices)) {
    checkNumber(`serveViewer: prices["${model}"].inputPerMTok`, price?.inputPerMTok, { min: 0 });
    checkNumber(`serveViewer: prices["${model}"].outputPerMTok`, price?.outputPerMTok, { min: 0 });
    if (price.inputPerMTok === undefined || price.outputPerMTok === undefined)
      throw new AgentError(`serveViewer: prices["${model}"] needs inputPerMTok and outputPerMTok`);
  }
}

function loopbackHost(host: unknown): string {
  if (typeof host !== "string") throw new AgentError(`serveViewer: host must be a string; got ${describeValue(host)}`);
  if (host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) return host;
  throw new AgentError(
    `serveViewer: host ${JSON.stringify(host)} is not a loopback address. Session logs hold prompts, tool output and maybe secrets, ` +
      "so the viewer listens only on this machine (127.0.0.1, ::1 or localhost); to view it from elsewhere, forward the port (ssh -L).",
  );
}

async function resolveTarget(path: string): Promise<ViewerTarget> {
  const given = resolve(path);
  let root: string;
  try {
    root = await realpath(given);
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT")
      throw new AgentError(`serveViewer: no session log or directory at ${given}`, { cause: error });
    throw error;
  }
  const stats = await stat(root);
  if (stats.isDirectory()) return { kind: "directory", root, name: basename(given) };
  if (stats.isFile()) return { kind: "file", root, name: basename(given) };
  throw new AgentError(`serveViewer: ${given} is neither a file nor a directory`);
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((done, fail) => {
    server.once("error", fail);
    server.listen(port, host, () => {
      server.off("error", fail);
      done();
    });
  });
}
