import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Tool } from "../tools/tool.ts";
import { parseMcpConfig } from "../mcp/config.ts";
import { createStyle, type Style } from "./ansi.ts";
import { CliError } from "./cli-error.ts";
import { describeMcpConfig, mcpRuns, type McpConfigDescription } from "./describe-mcp-config.ts";
import { mcpTrust } from "./mcp-trust.ts";
import type { CommandSandbox } from "./sandbox/command-sandbox.ts";
import { sandboxedMcpServers } from "./sandbox/sandboxed-mcp-servers.ts";

/**
 * The tools of the configured MCP servers, and how to disconnect; `servers` names them, `runs`
 * lists the files they run (see `mcpRuns`), which a write must never change unasked.
 */
export type CliMcp = { tools: Tool[]; servers: string[]; runs: string[]; close: () => Promise<void> };

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
  const path =
    configPath === undefined
      ? join(options.workspace, ".simple-agent-loop", "mcp.json")
      : resolve(options.cwd, configPath);
  const env = options.env ?? process.env;
  if (!existsSync(path)) {
    if (configPath !== undefined) throw new CliError(`the MCP config ${path} does not exist`);
    return none();
  }
  // Loaded only when there is a config: the MCP SDK is an optional dependency.
  const { connectMcp } = await import("../mcp/index.ts");
  try {
    // Read once: what is trusted (by its hash) is exactly what starts.
    const content = readFileSync(path, "utf8");
    const servers = parseMcpConfig(content, path, { env });
    if (Object.keys(servers).length === 0) return none();
    if (configPath === undefined && !(await trusted(path, content, Object.keys(servers), env, options))) return none();
    const started =
      options.sandbox === undefined
        ? { servers, cleanup: async () => undefined }
        : await sandboxedMcpServers(servers, options.sandbox, { workspace: options.workspace, cwd: options.cwd });
    let connection;
    try {
      connection = await connectMcp(started.servers, {
        prefix: true,
        clientInfo: { name: "simple-agent-loop", version: options.version },
        // A server's own log lines would tear through the prompt on a terminal.
        stderr: options.quiet ? "ignore" : "inherit",
      });
    } catch (error) {
      await started.cleanup();
      if (options.sandbox === undefined) throw error;
      throw new Error(
        `${(error as Error).message} (stdio servers run in the sandbox, as bash commands do but with the network; --sandbox off runs them unconfined)`,
        { cause: error },
      );
    }
    const opened = connection;
    // Past a few dozen tools the schemas alone fill much of each request: load them on demand instead.
    const deferAll = connection.tools.length > mcpDeferAbove;
    return {
      tools: connection.tools.map((mcpTool) => ({ ...mcpTool, eager: false, ...(deferAll ? { deferred: true } : {}) })),
      servers: Object.keys(servers),
      runs: [path, ...mcpRuns(servers, options.cwd)],
      close: async () => {
        await opened.close();
        await started.cleanup();
      },
    };
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
};

function none(): CliMcp {
  return { tools: [], servers: [], runs: [], close: async () => undefined };
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
  options: McpToolsOptions,
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
