import { AgentError, describeValue } from "../errors.ts";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { ServerCapabilities, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { Tool } from "../tools/tool.ts";
import type { McpElicitationHandler } from "./elicitation.ts";
import { mcpPrompts, type McpPrompts } from "./prompts.ts";
import { mcpResources, resourceTools, type McpResources, type McpResourceUpdate } from "./resources.ts";
import type { McpHeldTool, McpToolsChange, RegisteredServer, ToolRegistry } from "./tool-registry.ts";
import type { McpTokenStore } from "./token-store.ts";
import type { McpTrustStore } from "./trust-store.ts";

/** A server once connected: its registry entry, what it said at initialization, its listing queue. */
export type ConnectedServer = RegisteredServer & {
  protocolVersion: string;
  refreshing: Promise<void>;
  subscriptions: Map<string, Set<(update: McpResourceUpdate) => void>>;
};

function serverInfoOf({ client, protocolVersion }: ConnectedServer): McpServerInfo {
  const implementation = client.getServerVersion();
  const info: McpServerInfo = {
    name: implementation?.name ?? "",
    version: implementation?.version ?? "",
    protocolVersion,
    capabilities: client.getServerCapabilities() ?? {},
  };
  const instructions = client.getInstructions();
  if (instructions !== undefined) info.instructions = instructions;
  return info;
}

/**
 * Where `tools/list_changed` notifications go: held until `start` (the registry exists then),
 * dropped after `stop`.
 */
export type ListChanges = {
  changed: (server: string) => void;
  start: (refresh: (server: string) => void) => void;
  stop: () => void;
};

export function listChanges(): ListChanges {
  const early = new Set<string>();
  let refresh: ((server: string) => void) | undefined;
  let stopped = false;
  return {
    changed: (server) => {
      if (stopped) return;
      if (refresh === undefined) early.add(server);
      else refresh(server);
    },
    start: (listener) => {
      refresh = listener;
      for (const server of early) listener(server);
      early.clear();
    },
    stop: () => {
      stopped = true;
    },
  };
}

/**
 * The connection over servers already connected and their registry: its methods, the listings
 * after changes, and closing (`closeAll` stops every server, once).
 */
export function openConnection(
  reached: readonly ConnectedServer[],
  registry: ToolRegistry,
  options: McpOptions,
  { closeAll, listChanges: changes }: { closeAll: () => Promise<void>; listChanges: ListChanges },
): McpConnection {
  let closing: Promise<void> | undefined;
  const byName = new Map(reached.map((entry) => [entry.server, entry]));
  const serverNamed = (server: unknown): ConnectedServer => {
    const found = typeof server === "string" ? byName.get(server) : undefined;
    if (found === undefined)
      throw new AgentError(
        `MCP: no server named ${describeValue(server)}; the servers are ${[...byName.keys()].join(", ")}`,
      );
    return found;
  };
  // One listing at a time per server: a notification during a listing lists again after it.
  const refresh = async (entry: ConnectedServer): Promise<void> => {
    const previous = entry.refreshing;
    const next = previous.then(async () => {
      if (closing !== undefined) return;
      const listed = await listTools(entry.client, requestOptionsOf(options));
      if (closing !== undefined) return;
      const change = await registry.update(entry.server, listed);
      if (change.added.length + change.removed.length + change.changed.length > 0) options.onToolsChanged?.(change);
    });
    entry.refreshing = next.catch(() => undefined);
    return next;
  };
  // A failed listing after a notification keeps the tools listed before.
  changes.start((server) => void refresh(byName.get(server)!).catch(() => undefined));

  const close = (): Promise<void> => {
    options.signal?.removeEventListener("abort", closeOnAbort);
    closing ??= closeAll();
    return closing;
  };
  // Listeners of this signal run before those of the signals derived from it (the loop's, a tool
  // call's), which send the servers their cancellations: close after those, so they get through.
  const closeOnAbort = (): void => queueMicrotask(() => void close());
  options.signal?.addEventListener("abort", closeOnAbort, { once: true });
  const clients = Object.fromEntries(reached.map(({ server, client }) => [server, client]));
  const resources = mcpResources(reached, serverNamed, requestOptionsOf(options));
  const extraTools = options.resources === "tools" ? resourceTools(resources) : [];
  return {
    get tools() {
      const tools = registry.tools();
      return extraTools.length === 0 ? tools : [...tools, ...extraTools];
    },
    get heldTools() {
      return registry.heldTools();
    },
    trustTool: (server, name) => {
      serverNamed(server);
      return registry.trust(server, name);
    },
    refreshTools: async (server) => {
      const chosen = server === undefined ? reached : [serverNamed(server)];
      await Promise.all(chosen.map(refresh));
    },
    serverInfo: (server) => serverInfoOf(serverNamed(server)),
    ...resources,
    ...mcpPrompts(reached, serverNamed, requestOptionsOf(options)),
    clients,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Options of `connectMcp` and `withMcp`. */
export type McpOptions = {
  /**
   * Name tools `<server>__<tool>` (sanitized to `^[a-zA-Z0-9_-]{1,64}$`) instead of the tool's own
   * name. Needed when two servers have a tool of the same name: without it, connecting throws.
   */
  prefix?: boolean;
  /**
   * Aborting it closes every connection (stdio servers are stopped); while connecting, it cancels
   * the connection and `connectMcp` rejects with its reason. Pass the run's signal so the servers
   * go away when the run is aborted.
   */
  signal?: AbortSignal;
  /**
   * Milliseconds each MCP request may take: connecting, listing tools, and every tool call (a
   * progress notification from the server restarts a call's clock). Default 60 000, the SDK's.
   * The loop's `toolTimeout` applies as well; raise this one for tools that run longer.
   */
  timeout?: number;
  /**
   * Where the stderr of stdio servers goes (default `"inherit"`: this process's stderr). With
   * `"ignore"` it is not shown, but its last lines still explain a server that fails to connect.
   */
  stderr?: "inherit" | "ignore";
  /** How this client introduces itself to servers (default `{ name: "simple-agent-loop", version: "0" }`). */
  clientInfo?: { name: string; version: string };
  /**
   * Called after a server's tools were listed again (`notifications/tools/list_changed`, debounced,
   * or `refreshTools`) and something changed, with the MCP names of the tools added, removed and
   * changed (a changed tool is also held when it differs from its pin; see `trust`).
   */
  onToolsChanged?: (change: McpToolsChange) => void;
  /**
   * Where the definitions of trusted tools are pinned (default `memoryTrustStore()`: what each
   * connection sees first). A tool listed for the first time is pinned; one whose
   * `toolFingerprint` differs from its pin, at connect or after a change, is held: left out of
   * `tools`, listed in `heldTools`, its calls refused, until `trustTool` pins it. `false`: no checks.
   */
  trust?: McpTrustStore | false;
  /**
   * `"tools"`: `tools` ends with `list_resources` (`{ server? }`) and `read_resource`
   * (`{ server, uri }`, answering with content parts: images as images), so the model can read the
   * servers' resources.
   */
  resources?: "tools";
  /**
   * How servers' questions to the user (`elicitation/create`) are answered: a handler, or
   * `"events"`: each becomes the run's `elicitation-request` event (from the tool call in flight on
   * that server), answered with `answerElicitation` on the `agentStream` handle. With either, the
   * client declares form and URL elicitation; without, none (servers do not ask). Form content is
   * checked against the request's `requestedSchema`; content that fails is not sent, the server
   * gets an invalid-params error naming the field.
   */
  elicitation?: McpElicitationHandler | "events";
  /** Milliseconds a question waits for its answer before it is cancelled (default 600 000). */
  elicitationTimeoutMs?: number;
  /** OAuth 2.1 sign-in of HTTP servers that answer 401 (a server entry's `auth: false` opts out). */
  oauth?: McpOAuthOptions;
};

/**
 * How HTTP servers that answer 401 are signed in to, by the MCP SDK's OAuth client: discovery,
 * dynamic registration (unless the entry's `auth` names a client), PKCE S256, a 128-bit `state`,
 * `resource` set to the server's URL, refresh once, a new sign-in when the refresh is refused.
 */
export type McpOAuthOptions = {
  /** Where tokens, client registrations and discovery are kept, per server URL (default `memoryTokenStore()`). */
  store?: McpTokenStore;
  /**
   * Shows the sign-in URL to the user (opens a browser, prints it). Without it, a server that
   * needs the user fails at once saying so; stored tokens still connect.
   */
  openAuthorizationUrl?: (url: string, server: string) => void | Promise<void>;
  /** Milliseconds to wait for the redirect back before the connection fails (default 300 000). */
  timeoutMs?: number;
  /** Port of the redirect listener `http://127.0.0.1:<port>/callback` (default: an ephemeral one). */
  redirectPort?: number;
};

/**
 * Open connections to MCP servers and their tools. `tools` follows the servers: when one says its
 * tools changed (`notifications/tools/list_changed`), they are listed again (debounced).
 */
export type McpConnection = McpResources &
  McpPrompts & {
    /**
     * One loop tool per MCP tool, servers in configuration order, each server's tools in its order,
     * held tools left out: the list now (a getter; a run keeps the list it was given). A tool object
     * from an earlier list whose tool was removed or is held gives an error result without calling
     * the server.
     */
    readonly tools: Tool[];
    /** The tools left out of `tools` because their definition differs from the trusted one. */
    readonly heldTools: McpHeldTool[];
    /** Pins the definition `server` lists now for its held tool `name` and offers the tool again. */
    trustTool: (server: string, name: string) => Promise<void>;
    /** Lists the tools of `server` (default: every server) again now; `onToolsChanged` hears what changed. */
    refreshTools: (server?: string) => Promise<void>;
    /** What `server` said of itself when it connected. Throws `AgentError` for an unknown server. */
    serverInfo: (server: string) => McpServerInfo;
    /** The SDK client of each server, by configuration key: for resources, prompts and other requests. */
    clients: Record<string, Client>;
    /**
     * Closes every connection; stdio servers are asked to exit (stdin closed, then SIGTERM, then
     * SIGKILL, sent to the server's own process group so what it started ends too) and awaited; HTTP sessions are ended with a DELETE, after the messages still being
     * sent (a cancellation) have gone out (waiting at most 2 s for both). Idempotent: later calls, and calls while an abort is closing, return
     * the same promise. Tool calls after closing become error results.
     */
    close: () => Promise<void>;
    /** The same as `close`, for `await using connection = await connectMcp(…)`. */
    [Symbol.asyncDispose]: () => Promise<void>;
  };

/** What a server said of itself at initialization, with the protocol version agreed on. */
export type McpServerInfo = {
  name: string;
  version: string;
  /** The protocol revision agreed at initialization (the client offers the newest its SDK knows). */
  protocolVersion: string;
  capabilities: ServerCapabilities;
  /** How to use the server, when it says (meant for the model's system prompt; untrusted text). */
  instructions?: string;
};

export function requestOptionsOf(options: McpOptions): { timeout?: number } {
  return options.timeout === undefined ? {} : { timeout: options.timeout };
}

/** Every tool `client` lists (all pages); none when it has no tools. */
export async function listTools(
  client: Client,
  requestOptions: { signal?: AbortSignal; timeout?: number },
): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  // A server of only resources or prompts is still worth connecting to (see `clients`).
  if (client.getServerCapabilities()?.tools === undefined) return tools;
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, requestOptions);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}
