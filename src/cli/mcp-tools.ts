import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Tool } from "../tools.ts";
import { parseMcpConfig, type McpServerConfig } from "../mcp/config.ts";
import { CliError } from "./cli-error.ts";
import { mcpTrust } from "./mcp-trust.ts";

/** The tools of the configured MCP servers, and how to disconnect; `servers` names them. */
export type CliMcp = { tools: Tool[]; servers: string[]; close: () => Promise<void> };

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
 * servers are not started, and `warn` says how to start them.
 */
export async function connectMcpTools(
  configPath: string | undefined,
  options: {
    workspace: string;
    cwd: string;
    version: string;
    quiet: boolean;
    /** Where trusted configs are remembered (the CLI's home). */
    home: string;
    /** `--yes`: every tool runs without asking, so the workspace's servers start too. */
    yes: boolean;
    /** Asks on the terminal whether to start these servers (none without a terminal). */
    ask?: (servers: string) => Promise<McpTrustAnswer>;
    warn: (line: string) => void;
  },
): Promise<CliMcp> {
  const path = configPath === undefined ? join(options.workspace, ".simple-agent-loop", "mcp.json") : resolve(options.cwd, configPath);
  const none: CliMcp = { tools: [], servers: [], close: async () => undefined };
  if (!existsSync(path)) {
    if (configPath !== undefined) throw new CliError(`the MCP config ${path} does not exist`);
    return none;
  }
  // Loaded only when there is a config: the MCP SDK is an optional dependency.
  const { connectMcp } = await import("../mcp/index.ts");
  try {
    // Read once: what is trusted (by its hash) is exactly what starts.
    const content = readFileSync(path, "utf8");
    const servers = parseMcpConfig(content, path);
    if (Object.keys(servers).length === 0) return none;
    if (configPath === undefined && !options.yes) {
      const trust = mcpTrust(options.home);
      if (!trust.trusted(path, content)) {
        const answer = options.ask === undefined ? "no" : await options.ask(describeServers(servers));
        if (answer === "no") {
          options.warn(
            `MCP: ${path} is not trusted, so its servers were not started (${Object.keys(servers).join(", ")}). ` +
              `Trust it on a terminal ("always"), or pass --mcp-config ${path} or --yes.`,
          );
          return none;
        }
        if (answer === "always") trust.trust(path, content);
      }
    }
    const connection = await connectMcp(servers, {
      prefix: true,
      clientInfo: { name: "simple-agent-loop", version: options.version },
      // A server's own log lines would tear through the prompt on a terminal.
      stderr: options.quiet ? "ignore" : "inherit",
    });
    return { tools: connection.tools.map((mcpTool) => ({ ...mcpTool, eager: false })), servers: Object.keys(servers), close: connection.close };
  } catch (error) {
    throw new CliError(`MCP (${path}): ${(error as Error).message}`);
  }
}

// What each server would run or reach; never its environment or headers (they hold secrets).
function describeServers(servers: Record<string, McpServerConfig>): string {
  return Object.entries(servers)
    .map(([name, server]) => `  ${name}: ${"url" in server ? server.url : [server.command, ...(server.args ?? [])].join(" ")}\n`)
    .join("");
}
