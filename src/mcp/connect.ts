// The MCP SDK is an optional peer dependency: only types are imported statically; `connectMcp`
// loads the SDK when first called, and only the transports the configuration uses.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type {
  ElicitRequestSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { AgentError, describeValue, errorMessage } from "../errors.ts";
import { checkBoolean, checkChoice, checkNumber, maxTimerDelay } from "../numeric-options.ts";
import type { Tool, ToolContext } from "../tools/tool.ts";
import type { McpServerConfig } from "./config.ts";
import {
  listChanges,
  listTools,
  openConnection,
  requestOptionsOf,
  type ConnectedServer,
  type ListChanges,
  type McpConnection,
  type McpOptions,
} from "./connection.ts";
import { dropAwareFetch } from "./drop-aware-fetch.ts";
import { listenForCallback } from "./oauth-callback.ts";
import { oauthProvider, type OAuthFlow } from "./oauth-provider.ts";
import { memoryTokenStore, type McpTokenStore } from "./token-store.ts";
import { elicitationRequestHandler } from "./elicitation.ts";
import { McpConnectionError, messageWithCause } from "./errors.ts";
import { resourceUpdated, type McpResourceUpdate } from "./resources.ts";
import type { stdioTransport } from "./stdio-transport.ts";
import { toolRegistry, type ToolRegistry } from "./tool-registry.ts";
import { memoryTrustStore, type McpTrustStore } from "./trust-store.ts";

export type { McpConnection, McpOAuthOptions, McpOptions, McpServerInfo } from "./connection.ts";

/**
 * Connects to every server (in parallel) and lists their tools. Rejects with
 * `McpConnectionError` naming the server when one cannot be reached or fails initialization,
 * with `McpConfigError` when tool names clash (see `prefix`), and with the signal's reason when
 * aborted; in every case the servers already connected are closed first (no child process is left).
 *
 * The caller closes the connection: call `close()`, use `await using`, pass a `signal`, or let
 * `withMcp` do it.
 */
export async function connectMcp(
  servers: Record<string, McpServerConfig>,
  options: McpOptions = {},
): Promise<McpConnection> {
  checkMcpOptions(options);
  const entries = Object.entries(servers);
  const sdk = await loadSdk(entries.map(([, config]) => config));
  options.signal?.throwIfAborted();
  // Aborted on the first failure, so the other servers stop connecting instead of being awaited,
  // and by the caller's signal only while connecting: the SDK never removes its listener from a
  // request's signal, so a signal still tied to the caller's would, when the run is aborted much
  // later, send cancellations of the long finished `initialize` and `tools/list`.
  const giveUp = new AbortController();
  const abortConnecting = (): void => giveUp.abort();
  options.signal?.addEventListener("abort", abortConnecting, { once: true });
  const transports: Transport[] = [];
  let failure: unknown;
  // Change notifications are taken once every server is connected and its tools registered.
  const changes = listChanges();
  const closed = new AbortController();
  const connected = await Promise.allSettled(
    entries.map(async ([server, config]) => {
      try {
        return await connectServer(sdk, {
          server,
          config,
          options,
          signal: giveUp.signal,
          transports,
          changes,
          closed: closed.signal,
        });
      } catch (error) {
        failure ??= error;
        giveUp.abort();
        throw error;
      }
    }),
  );
  options.signal?.removeEventListener("abort", abortConnecting);
  const closeAll = async (): Promise<void> => {
    changes.stop();
    closed.abort();
    await Promise.all(transports.map((transport) => transport.close()));
  };
  if (options.signal?.aborted === true || failure !== undefined) {
    await closeAll();
    throw options.signal?.aborted === true ? options.signal.reason : failure;
  }
  const reached = connected.map((outcome) => (outcome as PromiseFulfilledResult<ConnectedServer>).value);
  let registry: ToolRegistry;
  try {
    registry = await toolRegistry(reached, {
      prefix: options.prefix === true,
      trust: options.trust === false ? undefined : (options.trust ?? memoryTrustStore()),
    });
  } catch (error) {
    await closeAll();
    throw error;
  }
  return openConnection(reached, registry, options, { closeAll, listChanges: changes });
}

// Checked as the loop checks its own, before any server starts: a `timeout: "5000"` or a
// `prefix: "false"` is refused, not coerced.
function checkMcpOptions(options: McpOptions): void {
  if (typeof options !== "object" || options === null)
    throw new AgentError(`connectMcp: options must be an object; got ${describeValue(options)}`);
  checkBoolean("connectMcp: prefix", options.prefix);
  checkChoice("connectMcp: resources", options.resources, ["tools"]);
  if (
    options.elicitation !== undefined &&
    options.elicitation !== "events" &&
    typeof options.elicitation !== "function"
  )
    throw new AgentError(
      `connectMcp: elicitation must be a function or "events"; got ${describeValue(options.elicitation)}`,
    );
  checkNumber("connectMcp: elicitationTimeoutMs", options.elicitationTimeoutMs, {
    min: 0,
    exclusive: true,
    max: maxTimerDelay,
  });
  checkOAuthOptions(options.oauth);
  if (options.onToolsChanged !== undefined && typeof options.onToolsChanged !== "function")
    throw new AgentError(`connectMcp: onToolsChanged must be a function; got ${describeValue(options.onToolsChanged)}`);
  const trust: unknown = options.trust;
  if (
    trust !== undefined &&
    trust !== false &&
    (typeof trust !== "object" ||
      trust === null ||
      typeof (trust as McpTrustStore).load !== "function" ||
      typeof (trust as McpTrustStore).save !== "function")
  )
    throw new AgentError(`connectMcp: trust must be { load, save } or false; got ${describeValue(trust)}`);
  checkNumber("connectMcp: timeout", options.timeout, { min: 0, exclusive: true, max: maxTimerDelay });
  checkChoice("connectMcp: stderr", options.stderr, ["inherit", "ignore"]);
  const info: unknown = options.clientInfo;
  if (
    info !== undefined &&
    (typeof info !== "object" ||
      info === null ||
      typeof (info as { name?: unknown }).name !== "string" ||
      typeof (info as { version?: unknown }).version !== "string")
  )
    throw new AgentError(
      `connectMcp: clientInfo must be { name: string, version: string }; got ${describeValue(info)}`,
    );
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    throw new AgentError(`connectMcp: signal must be an AbortSignal; got ${describeValue(options.signal)}`);
}

/**
 * Connects, runs `run` with the servers' tools, and closes every connection when `run` settles
 * (resolves or throws), before returning its value or rethrowing its error.
 */
export async function withMcp<T>(
  servers: Record<string, McpServerConfig>,
  run: (tools: Tool[], connection: McpConnection) => Promise<T>,
  options: McpOptions = {},
): Promise<T> {
  const connection = await connectMcp(servers, options);
  try {
    return await run(connection.tools, connection);
  } finally {
    await connection.close();
  }
}

function checkOAuthOptions(oauth: McpOptions["oauth"]): void {
  if (oauth === undefined) return;
  if (typeof oauth !== "object" || oauth === null)
    throw new AgentError(`connectMcp: oauth must be an object; got ${describeValue(oauth)}`);
  checkNumber("connectMcp: oauth.timeoutMs", oauth.timeoutMs, { min: 0, exclusive: true, max: maxTimerDelay });
  checkNumber("connectMcp: oauth.redirectPort", oauth.redirectPort, { min: 1, max: 65_535, integer: true });
  if (oauth.openAuthorizationUrl !== undefined && typeof oauth.openAuthorizationUrl !== "function")
    throw new AgentError(
      `connectMcp: oauth.openAuthorizationUrl must be a function; got ${describeValue(oauth.openAuthorizationUrl)}`,
    );
  const store: unknown = oauth.store;
  if (
    store !== undefined &&
    (typeof store !== "object" ||
      store === null ||
      !["get", "set", "delete"].every((method) => typeof (store as Record<string, unknown>)[method] === "function"))
  )
    throw new AgentError(`connectMcp: oauth.store must have get, set and delete; got ${describeValue(store)}`);
}

type Sdk = {
  Client: typeof Client;
  ElicitRequestSchema: typeof ElicitRequestSchema;
  McpError: typeof McpError;
  ResourceUpdatedNotificationSchema: typeof ResourceUpdatedNotificationSchema;
  stdioTransport?: typeof stdioTransport;
  StreamableHTTPClientTransport?: typeof StreamableHTTPClientTransport;
};

async function loadSdk(configs: readonly McpServerConfig[]): Promise<Sdk> {
  // The stdio transport needs node:child_process; a configuration without it loads only HTTP.
  const stdio = configs.some((config) => "command" in config);
  const http = configs.some((config) => !("command" in config));
  try {
    const [client, types, stdioModule, httpModule] = await Promise.all([
      import("@modelcontextprotocol/sdk/client/index.js"),
      import("@modelcontextprotocol/sdk/types.js"),
      stdio ? import("./stdio-transport.ts") : undefined,
      http ? import("@modelcontextprotocol/sdk/client/streamableHttp.js") : undefined,
    ]);
    const sdk: Sdk = {
      Client: client.Client,
      ResourceUpdatedNotificationSchema: types.ResourceUpdatedNotificationSchema,
      ElicitRequestSchema: types.ElicitRequestSchema,
      McpError: types.McpError,
    };
    if (stdioModule !== undefined) sdk.stdioTransport = stdioModule.stdioTransport;
    if (httpModule !== undefined) sdk.StreamableHTTPClientTransport = httpModule.StreamableHTTPClientTransport;
    return sdk;
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ERR_MODULE_NOT_FOUND") throw error;
    throw new AgentError("simple-agent-loop/mcp needs the MCP SDK: npm install @modelcontextprotocol/sdk", {
      cause: error,
    });
  }
}

/** What `connectServer` needs to reach one server. */
type ServerConnect = {
  server: string;
  config: McpServerConfig;
  options: McpOptions;
  signal: AbortSignal;
  /** Every transport made, so a failure elsewhere closes them all. */
  transports: Transport[];
  changes: ListChanges;
  /** Aborted when the connection closes: questions still waiting are cancelled. */
  closed: AbortSignal;
};

async function connectServer(sdk: Sdk, connect: ServerConnect): Promise<ConnectedServer> {
  const { server, config, options, signal, transports } = connect;
  const where = "command" in config ? `command "${config.command}"` : describeUrl(config.url);
  const fail = (problem: string, cause?: unknown): McpConnectionError =>
    new McpConnectionError(`MCP server "${server}" (${where}): ${problem}`, { server, cause });
  const stderr = { tail: "" };
  const flow: OAuthFlow | undefined =
    "command" in config || options.oauth === undefined || config.auth === false
      ? undefined
      : { authorizationRequested: false };
  const open = (): { transport: Transport; client: Client; calls: Map<string, ToolContext> } => {
    let transport: Transport;
    try {
      transport = createTransport(sdk, { server, config, options, stderr, flow });
    } catch (error) {
      throw fail(errorMessage(error), error);
    }
    transports.push(transport);
    return { transport, ...createClient(sdk, connect, transport) };
  };
  const requestOptions = { signal, ...requestOptionsOf(options) };
  let { transport, client, calls } = open();
  try {
    try {
      await client.connect(transport, requestOptions);
    } catch (error) {
      if (flow?.authorizationRequested !== true || signal.aborted) throw error;
      // The SDK asked for the user: the redirect brings the code, then a new connection uses the tokens.
      const code = await waitForCode(flow, options.oauth?.timeoutMs ?? defaultSignInTimeoutMs, signal, fail);
      try {
        await (transport as StreamableHTTPClientTransport).finishAuth(code);
      } catch (cause) {
        throw fail(`sign-in failed: ${messageWithCause(cause)}`, cause);
      }
      ({ transport, client, calls } = open());
      await client.connect(transport, requestOptions);
    }
    const listed = await listTools(client, requestOptions);
    return {
      subscriptions: subscriptionsOf(client),
      server,
      client,
      timeout: options.timeout,
      calls,
      deferred: config.deferred === true,
      listed,
      protocolVersion: protocolVersionOf(transport),
      refreshing: Promise.resolve(),
    };
  } catch (error) {
    if (signal.aborted || error instanceof McpConnectionError) throw error;
    const said = stderr.tail.trim();
    // A server that exits at startup usually says why on stderr, e.g. a missing API key.
    throw fail(`${describeFailure(error, config)}${said === "" ? "" : `; its stderr ended with: ${said}`}`, error);
  } finally {
    await flow?.callback?.close();
  }
}

const subscriptionMaps = new WeakMap<Client, Map<string, Set<(update: McpResourceUpdate) => void>>>();
const protocolVersions = new WeakMap<Transport, { version: string }>();

function subscriptionsOf(client: Client): Map<string, Set<(update: McpResourceUpdate) => void>> {
  return subscriptionMaps.get(client)!;
}

function protocolVersionOf(transport: Transport): string {
  return protocolVersions.get(transport)?.version ?? "";
}

function createClient(
  sdk: Sdk,
  connect: ServerConnect,
  transport: Transport,
): { client: Client; calls: Map<string, ToolContext> } {
  const { server, options } = connect;
  // Stdio has no place for the version agreed on; the SDK hands it to transports that can keep it.
  const agreed = { version: "" };
  protocolVersions.set(transport, agreed);
  const keepVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    agreed.version = version;
    keepVersion?.(version);
  };
  const client = new sdk.Client(options.clientInfo ?? { name: "simple-agent-loop", version: "0" }, {
    ...(options.elicitation === undefined ? {} : { capabilities: { elicitation: { form: {}, url: {} } } }),
    listChanged: {
      tools: {
        autoRefresh: false,
        debounceMs: listChangedDebounceMs,
        onChanged: () => connect.changes.changed(server),
      },
    },
  });
  const subscriptions = new Map<string, Set<(update: McpResourceUpdate) => void>>();
  subscriptionMaps.set(client, subscriptions);
  client.setNotificationHandler(sdk.ResourceUpdatedNotificationSchema, (notification) =>
    resourceUpdated({ server, client, subscriptions }, notification.params.uri),
  );
  const calls = new Map<string, ToolContext>();
  if (options.elicitation !== undefined)
    client.setRequestHandler(
      sdk.ElicitRequestSchema,
      elicitationRequestHandler({
        server,
        calls,
        answerWith: options.elicitation,
        timeoutMs: options.elicitationTimeoutMs ?? defaultElicitationTimeoutMs,
        closed: connect.closed,
        invalidParams: (message) => new sdk.McpError(invalidParamsCode, message),
      }),
    );
  return { client, calls };
}

// The redirect with the code, the authorization server's error, the deadline or the abort, whichever comes first.
async function waitForCode(
  flow: OAuthFlow,
  timeoutMs: number,
  signal: AbortSignal,
  fail: (problem: string, cause?: unknown) => McpConnectionError,
): Promise<string> {
  if (flow.callback === undefined) throw fail("sign-in failed: no redirect listener was started");
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(fail(`sign-in not finished within ${timeoutMs} ms (oauth.timeoutMs)`)),
      Math.min(timeoutMs, maxTimerDelay),
    );
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([
      flow.callback.code.catch((error: unknown) => {
        throw fail(`sign-in failed: ${errorMessage(error)}`, error);
      }),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort!);
  }
}

const defaultSignInTimeoutMs = 300_000;

const defaultElicitationTimeoutMs = 600_000;
// ErrorCode.InvalidParams of JSON-RPC.
const invalidParamsCode = -32_602;

// Several changes in a row (a server registering tools one by one) are listed once.
const listChangedDebounceMs = 300;

// One memory store per oauth options object, so every server and connection given the same options shares it.
const memoryStores = new WeakMap<object, McpTokenStore>();

function defaultTokenStore(oauth: object): McpTokenStore {
  let store = memoryStores.get(oauth);
  if (store === undefined) memoryStores.set(oauth, (store = memoryTokenStore()));
  return store;
}

/** What `createTransport` needs for one server. */
type TransportSettings = {
  server: string;
  config: McpServerConfig;
  options: McpOptions;
  stderr: { tail: string };
  /** Set when the server may be signed in to with OAuth. */
  flow: OAuthFlow | undefined;
};

function createTransport(sdk: Sdk, settings: TransportSettings): Transport {
  const { server, config, options, stderr, flow } = settings;
  let transport: Transport;
  if ("command" in config) {
    if (typeof config.command !== "string" || config.command === "")
      throw new TypeError('"command" must be a non-empty string');
    const { command, args, env, cwd } = config;
    const stdio = sdk.stdioTransport!({
      command,
      ...(args === undefined ? {} : { args }),
      ...(env === undefined ? {} : { env }),
      ...(cwd === undefined ? {} : { cwd }),
      stderr: options.stderr === "ignore" ? "pipe" : "inherit",
    });
    // Read all along, or a chatty server would block once the pipe is full.
    stdio.stderr?.on("data", (chunk: Buffer) => {
      stderr.tail = (stderr.tail + chunk.toString("utf8")).slice(-stderrTailLength);
    });
    transport = stdio;
  } else {
    if (typeof config.url !== "string" || !URL.canParse(config.url))
      throw new TypeError(`"url" is not a valid URL: ${JSON.stringify(config.url)}`);
    // The SDK leaves a call pending until its timeout when the server goes away mid-call: a
    // response to those calls (an error) is made up for it.
    const answeringFetch = dropAwareFetch(reconnectionOptions.maxRetries, (ids, reason) => {
      for (const id of ids) {
        transport.onmessage?.({
          jsonrpc: "2.0",
          id,
          error: { code: connectionClosed, message: `Connection lost before the server answered: ${reason}` },
        });
      }
    });
    const origin = new URL(config.url).origin;
    // The entry's headers go to the server's own origin only, not to its authorization server (the
    // SDK's requestInit would send them with the OAuth requests too). The redirect listener starts
    // on the server's first 401, so the port is known before the SDK registers the client.
    const serverFetch: FetchLike = async (url, init) => {
      const sameOrigin = new URL(String(url)).origin === origin;
      let sent = init;
      if (sameOrigin && config.headers !== undefined) {
        const headers = new Headers(init?.headers);
        for (const [name, value] of Object.entries(config.headers)) headers.set(name, value);
        sent = { ...init, headers };
      }
      const response = await answeringFetch(url, sent);
      if (sameOrigin && response.status === 401 && flow !== undefined && flow.callback === undefined)
        flow.callback = await listenForCallback(options.oauth?.redirectPort ?? 0);
      return response;
    };
    const oauth = options.oauth;
    transport = new sdk.StreamableHTTPClientTransport!(new URL(config.url), {
      fetch: serverFetch,
      reconnectionOptions,
      ...(flow === undefined || oauth === undefined
        ? {}
        : {
            authProvider: oauthProvider({
              server,
              url: config.url,
              store: oauth.store ?? defaultTokenStore(oauth),
              ...(config.auth === undefined || config.auth === false ? {} : { auth: config.auth }),
              flow,
              ...(oauth.openAuthorizationUrl === undefined ? {} : { openAuthorizationUrl: oauth.openAuthorizationUrl }),
            }),
          }),
    });
  }
  // Closing aborts the HTTP requests still in flight, so a message sent just before (the
  // cancellation of a call the run's abort stopped) would never reach the server: close waits for them.
  const sending = new Set<Promise<void>>();
  const send = transport.send.bind(transport);
  transport.send = (message, sendOptions) => {
    const sent = send(message, sendOptions);
    const settled = (): void => void sending.delete(sent);
    sending.add(sent);
    sent.then(settled, settled);
    return sent;
  };
  // Without a DELETE the server keeps the session (and whatever it holds) until its own timeout.
  const http = "terminateSession" in transport ? (transport as StreamableHTTPClientTransport) : undefined;
  const farewell = async (): Promise<void> => {
    await Promise.allSettled(sending);
    await http?.terminateSession();
  };
  // The SDK's Client closes the transport without awaiting it when initialization fails; one
  // shared promise lets every later close wait until the server process has really exited.
  const closeTransport = transport.close.bind(transport);
  let closing: Promise<void> | undefined;
  transport.close = () =>
    (closing ??= within(closeGraceMs, farewell())
      .then(closeTransport)
      .catch(() => undefined));
  return transport;
}

// The SDK's defaults, given explicitly because dropAwareFetch counts failed resumptions as it does.
const reconnectionOptions = {
  initialReconnectionDelay: 1_000,
  maxReconnectionDelay: 30_000,
  reconnectionDelayGrowFactor: 1.5,
  maxRetries: 2,
};

// ErrorCode.ConnectionClosed, the code of the SDK's own "Connection closed" (the SDK is not loaded
// statically).
const connectionClosed = -32_000;

// Enough for the few lines a server prints before it exits.
const stderrTailLength = 1_000;

// How long closing waits for the last messages and the session's DELETE: a server that does not
// answer must not hold up the end of a run.
const closeGraceMs = 2_000;

async function within(milliseconds: number, work: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, milliseconds);
  });
  try {
    await Promise.race([work.catch(() => undefined), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function describeFailure(error: unknown, config: McpServerConfig): string {
  const { code } = (typeof error === "object" && error !== null ? error : {}) as { code?: unknown };
  if ("command" in config && code === "ENOENT") {
    const missing = config.cwd === undefined ? "command not found" : `command or cwd "${config.cwd}" not found`;
    return `${missing} (${errorMessage(error)})`;
  }
  return `could not connect: ${messageWithCause(error)}`;
}

// Only origin and path: a query string may carry a token.
function describeUrl(url: string): string {
  return URL.canParse(url) ? `${new URL(url).origin}${new URL(url).pathname}` : JSON.stringify(url);
}
