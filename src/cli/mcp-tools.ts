import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Tool } from "../tools.ts";
import { CliError } from "./cli-error.ts";

/** The tools of the configured MCP servers, and how to disconnect; `servers` names them. */
export type CliMcp = { tools: Tool[]; servers: string[]; close: () => Promise<void> };

/**
 * Connects to the MCP servers of `configPath` (resolved against `cwd`), or by default of
 * `<workspace>/.simple-agent-loop/mcp.json` when that file exists (no file: no servers). Tools
 * are named `<server>__<tool>`, so they never clash with each other or the built-in tools, and
 * never start before the model's response is complete (they may have side effects). Throws a
 * `CliError` when a named config file is missing, a server cannot be reached or the file is invalid.
 */
export async function connectMcpTools(
  configPath: string | undefined,
  options: { workspace: string; cwd: string; version: string; quiet: boolean },
): Promise<CliMcp> {
  const path = configPath === undefined ? join(options.workspace, ".simple-agent-loop", "mcp.json") : resolve(options.cwd, configPath);
  const none: CliMcp = { tools: [], servers: [], close: async () => undefined };
  if (!existsSync(path)) {
    if (configPath !== undefined) throw new CliError(`the MCP config ${path} does not exist`);
    return none;
  }
  // Loaded only when there is a config: the MCP SDK is an optional dependency.
  const { connectMcp, loadMcpConfig } = await import("../mcp/index.ts");
  try {
    const servers = await loadMcpConfig(path);
    if (Object.keys(servers).length === 0) return none;
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
