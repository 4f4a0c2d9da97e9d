import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Tool } from "../tools/tool.ts";
import { parseMcpConfig, type McpServerConfig } from "../mcp/config.ts";
import type { McpConnection } from "../mcp/connection.ts";
import type { McpElicitationHandler } from "../mcp/elicitation.ts";
import { isMcpConnectionError } from "../mcp/errors.ts";
import { loopToolName } from "../mcp/mcp-tools.ts";
import type { McpTokenStore } from "../mcp/token-store.ts";
import type { McpHeldTool, McpToolsChange } from "../mcp/tool-registry.ts";
import { createStyle, type Style } from "./ansi.ts";
import { CliError } from "./cli-error.ts";
import { describeMcpConfig, mcpRuns, type McpConfigDescription } from "./describe-mcp-config.ts";
import { cliTokenStore, cliTrustStore } from "./mcp-home.ts";
import { signInFirst } from "./mcp-sign-in.ts";
import { mcpTrust } from "./mcp-trust.ts";
import type { CommandSandbox } from "./sandbox/command-sandbox.ts";
import { sandboxedMcpServers } from "./sandbox/sandboxed-mcp-servers.ts";

/**
 * The tools of the configured MCP servers, and how to disconnect; `servers` names them, `runs`
 * lists the files they run (see `mcpRuns`), which a write must never change unasked. `status`
 * describes each server now, for `/mcp`; `review` asks about the tools held now (on a terminal).
 */
export type CliMcp = {
  /**
   * The tools offered now: each task's run takes them as they are when it starts (a tool trusted
   * from `/mcp`, or one a server added since, is offered from the next task's first model call).
   */
  tools: () => Tool[];
  servers: string[];
  runs: string[];
  close: () => Promise<void>;
  status: () => Promise<McpServerStatus[]>;
  review: () => Promise<McpHeldTool[]>;
};

/** One server as `/mcp` shows it. */
export type McpServerStatus = {
  name: string;
  /** `url <url>` or `command <command>`. */
  where: string;
  /** What the server said it is (`serverInfo`): its name and version, and the protocol version agreed. */
  info: { name: string; version: string; protocolVersion: string };
  /** `signed in` (tokens kept), `not signed in`, `no sign-in` (`auth: false`), `local` (a command). */
  signIn: "signed in" | "not signed in" | "no sign-in" | "local";
  /** How many of its tools are offered. */
  tools: number;
  /** Its tools held because they changed since they were trusted. */
  held: string[];
};

/** The answer to "start this workspace's MCP servers?". */
export type McpTrustAnswer = "once" | "always" | "no";

/**
 * Connects to the MCP servers of `configPath` (resolved against `cwd`), or by default of
 * `<workspace>/.simple-agent-loop/mcp.json` when that file exists (no file: no servers). Tools
 * are named `<server>__<tool>`, so they never clash with each other or the built-in tools, and
 * never start before the model's response is complete (they may have side effects). Throws a
 * `CliError` when a named config file is missing, a server cannot be reached or the file is invalid.
 *
 * A workspace's own config starts commands that came with the workspace (a cloned repository
 * can bring one), so it is used only when trusted: named with `--mcp-config`, `--yes`, or agreed
 * to on the terminal (`ask`; "always" is remembered while the file stays the same). Otherwise its
 * servers are not started, and `warn` says how to start them. The question shows everything the
 * config runs and sends, naming the user's environment variables it sends. `--yes` does not send
 * the user's credentials (variables named like keys, tokens, secrets) to a workspace's servers
 * unasked: such a config is asked about on a terminal, and not started without one.
 */
export async function connectMcpTools(configPath: string | undefined, options: McpToolsOptions): Promise<CliMcp> {
  const found = await trustedMcpServers(configPath, options);
  if (found === undefined) return none();
  const { path, servers } = found;
  // Loaded only when there is a config: the MCP SDK is an optional dependency.
  const { connectMcp } = await import("../mcp/index.ts");
  try {
    const started =
      options.sandbox === undefined
        ? { servers, cleanup: async () => undefined }
        : await sandboxedMcpServers(servers, options.sandbox, { workspace: options.workspace, cwd: options.cwd });
    let connection;
    const tokens = cliTokenStore(options.home);
    try {
      connection = await connectMcp(started.servers, {
        prefix: true,
        clientInfo: { name: "simple-agent-loop", version: options.version },
        // A server's own log lines would tear through the prompt on a terminal.
        stderr: options.quiet ? "ignore" : "inherit",
        // Pinned under what each server is, in the CLI's home: a tool that changes is held and asked about.
        trust: cliTrustStore(options.home, servers),
        oauth: { store: tokens, openAuthorizationUrl: options.signIn ?? signInFirst(options.command) },
        ...(options.elicitation === undefined ? {} : { elicitation: options.elicitation }),
        ...(options.onToolsChanged === undefined
          ? {}
          : { onToolsChanged: (change: McpToolsChange) => options.onToolsChanged!(describeToolsChange(change)) }),
      });
    } catch (error) {
      await started.cleanup();
      throw withSandboxNote(error, servers, options.sandbox !== undefined);
    }
    const opened = connection;
    const review = (): Promise<McpHeldTool[]> => reviewHeld(opened, options);
    await review();
    return {
      tools: () => offeredTools(opened.tools),
      servers: Object.keys(servers),
      runs: [path, ...mcpRuns(servers, options.cwd)],
      close: async () => {
        await opened.close();
        await started.cleanup();
      },
      status: () => serverStatus(opened, servers, tokens),
      review,
    };
  } catch (error) {
    throw new CliError(`MCP (${path}): ${(error as Error).message}`);
  }
}

// A server that failed to start may have failed for the sandbox it ran in: said only for a
// stdio server (a command) run in the sandbox, never for a URL server, which runs elsewhere.
function withSandboxNote(error: unknown, servers: Record<string, McpServerConfig>, sandboxed: boolean): unknown {
  const failed = isMcpConnectionError(error) ? servers[error.server] : undefined;
  if (!sandboxed || failed === undefined || !("command" in failed)) return error;
  return new Error(
    `${error instanceof Error ? error.message : String(error)} (stdio servers run in the sandbox, as bash commands do but with the network; --sandbox off runs them unconfined)`,
    { cause: error },
  );
}

// Each call made anew from the connection's current list (a getter), so no list of the past
// outlives a change. Past a few dozen tools the schemas alone fill much of each request: all are
// then loaded on demand instead.
function offeredTools(tools: readonly Tool[]): Tool[] {
  const deferAll = tools.length > mcpDeferAbove;
  return tools.map((mcpTool) => ({ ...mcpTool, eager: false, ...(deferAll ? { deferred: true } : {}) }));
}

/**
 * What a server changed in its tools while the CLI runs, as one line for the terminal (its names
 * are the server's: made visible by whoever prints it): the tools added (offered from the next
 * task), removed, and changed (held until trusted from `/mcp`).
 */
export function describeToolsChange(change: McpToolsChange): string {
  const list = (names: readonly string[]): string => names.join(", ");
  const parts = [
    ...(change.added.length === 0 ? [] : [`added ${list(change.added)} (offered from the next task)`]),
    ...(change.removed.length === 0 ? [] : [`removed ${list(change.removed)}`]),
    ...(change.changed.length === 0
      ? []
      : [`changed ${list(change.changed)} (held, not offered: /mcp shows the change and trusts it)`]),
  ];
  return `MCP: server ${change.server} changed its tools: ${parts.join("; ")}`;
}

// The tools held now are asked about one by one on a terminal (trusted on `y`), or named with how
// to review them. Resolves with those still held.
async function reviewHeld(connection: McpConnection, options: McpToolsOptions): Promise<McpHeldTool[]> {
  for (const held of connection.heldTools) {
    if (options.askHeld === undefined) {
      options.warn(
        `MCP: tool ${held.name} of server ${held.server} changed since you trusted it, so it is held (not offered to the model). Start the CLI on a terminal to see the change and trust it.`,
      );
      continue;
    }
    if (await options.askHeld(held)) await connection.trustTool(held.server, held.name);
  }
  return connection.heldTools;
}

async function serverStatus(
  connection: McpConnection,
  servers: Record<string, McpServerConfig>,
  tokens: McpTokenStore,
): Promise<McpServerStatus[]> {
  const held = connection.heldTools;
  // Each tool offered goes to the server of the longest prefix it starts with (a server "a__b" is not "a").
  const prefixes = Object.keys(servers).map((name) => [name, loopToolName(name, "", true)] as const);
  const owners = connection.tools.map(
    (tool) =>
      prefixes
        .filter(([, prefix]) => tool.name.startsWith(prefix))
        .sort((first, second) => second[1].length - first[1].length)[0]?.[0],
  );
  return Promise.all(
    Object.entries(servers).map(async ([name, config]): Promise<McpServerStatus> => {
      const { name: serverName, version, protocolVersion } = connection.serverInfo(name);
      const signIn: McpServerStatus["signIn"] =
        "command" in config
          ? "local"
          : config.auth === false
            ? "no sign-in"
            : (await tokens.get(config.url))?.tokens !== undefined
              ? "signed in"
              : "not signed in";
      return {
        name,
        where: "command" in config ? `command ${config.command}` : `url ${config.url}`,
        info: { name: serverName, version, protocolVersion },
        signIn,
        tools: owners.filter((owner) => owner === name).length,
        held: held.filter((tool) => tool.server === name).map((tool) => tool.name),
      };
    }),
  );
}

/**
 * The servers of the MCP config the CLI uses (`configPath`, or the workspace's own when it
 * exists), once trusted as `connectMcpTools` says; undefined when there are none to start.
 */
export async function trustedMcpServers(
  configPath: string | undefined,
  options: Pick<McpToolsOptions, "workspace" | "cwd" | "home" | "yes" | "ask" | "style" | "env" | "warn">,
): Promise<{ path: string; servers: Record<string, McpServerConfig> } | undefined> {
  const path =
    configPath === undefined
      ? join(options.workspace, ".simple-agent-loop", "mcp.json")
      : resolve(options.cwd, configPath);
  const env = options.env ?? process.env;
  if (!existsSync(path)) {
    if (configPath !== undefined) throw new CliError(`the MCP config ${path} does not exist`);
    return undefined;
  }
  try {
    // Read once: what is trusted (by its hash) is exactly what starts.
    const content = readFileSync(path, "utf8");
    const servers = parseMcpConfig(content, path, { env });
    if (Object.keys(servers).length === 0) return undefined;
    if (configPath === undefined && !(await trusted(path, content, Object.keys(servers), env, options)))
      return undefined;
    return { path, servers };
  } catch (error) {
    throw new CliError(`MCP (${path}): ${(error as Error).message}`);
  }
}

/** Above this many MCP tools, the CLI defers all of them (`search_tools` loads them), whatever each server says. */
export const mcpDeferAbove = 20;

/** Options of `connectMcpTools`. */
type McpToolsOptions = {
  workspace: string;
  cwd: string;
  version: string;
  /** The servers' own stderr is dropped (kept for error messages) rather than passed on to this process's. */
  quiet: boolean;
  /** Where trusted configs are remembered (the CLI's home). */
  home: string;
  /**
   * Where stdio servers run (see `sandboxedMcpServers`): the sandbox of `bash`, with the network.
   * Absent: unconfined, with the user's rights.
   */
  sandbox?: CommandSandbox;
  /** `--yes`: every tool runs without asking, so the workspace's servers start too. */
  yes: boolean;
  /** Asks on the terminal whether to start these servers (none without a terminal). */
  ask?: (config: McpConfigDescription) => Promise<McpTrustAnswer>;
  /** Styles the description `ask` gets (default: plain). */
  style?: Style;
  /** The environment `${NAME}` in the config is filled from (default: `process.env`). */
  env?: Record<string, string | undefined>;
  warn: (line: string) => void;
  /** How the user starts the CLI, for the commands a message names (`simple-agent-loop mcp login x`). */
  command: string;
  /** Shows a server's sign-in page (a terminal); absent: a server that needs a sign-in fails, naming `mcp login`. */
  signIn?: (url: string, server: string) => void;
  /** Answers servers' questions (a terminal); absent: servers are told the client takes none. */
  elicitation?: McpElicitationHandler;
  /** Asks whether to trust a tool that changed (a terminal); absent: it stays held, and `warn` says so. */
  askHeld?: (held: McpHeldTool) => Promise<boolean>;
  /** Hears, as a line for the user (`describeToolsChange`), each change a server makes to its tools while connected. */
  onToolsChanged?: (line: string) => void;
};

function none(): CliMcp {
  return {
    tools: () => [],
    servers: [],
    runs: [],
    close: async () => undefined,
    status: async () => [],
    review: async () => [],
  };
}

/**
 * Whether the workspace's own config may start: remembered as trusted, `--yes` for a config that
 * sends no credentials, or agreed to now (an "always" is remembered). When not, `warn` says how.
 */
async function trusted(
  path: string,
  content: string,
  serverNames: string[],
  env: Record<string, string | undefined>,
  options: Pick<McpToolsOptions, "home" | "yes" | "ask" | "style" | "warn">,
): Promise<boolean> {
  const trust = mcpTrust(options.home);
  const description = describeMcpConfig(content, path, env, options.style ?? createStyle(false));
  // --yes runs every tool unasked, but it is no consent to hand the user's secrets to a
  // server that came with the workspace.
  const needsAnswer = !options.yes || description.credentials.length > 0;
  if (!needsAnswer || trust.trusted(path, content)) return true;
  const answer = options.ask === undefined ? "no" : await options.ask(description);
  if (answer === "no") {
    const sends =
      description.credentials.length === 0 ? "" : ` It would send your ${description.credentials.join(", ")}.`;
    options.warn(
      `MCP: ${path} is not trusted, so its servers were not started (${serverNames.join(", ")}).${sends} ` +
        `Trust it on a terminal ("always"), or pass --mcp-config ${path}${description.credentials.length === 0 ? " or --yes" : ""}.`,
    );
    return false;
  }
  if (answer === "always") trust.trust(path, content);
  return true;
}
