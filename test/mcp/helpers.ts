import { randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { executeToolCalls, type JsonObject, type Tool, type ToolResultMessage } from "simple-agent-loop";
import type { McpStdioServerConfig } from "simple-agent-loop/mcp";

const serverScript = fileURLToPath(new URL("./fixture-server.ts", import.meta.url));

/** The fixture server over stdio; `tag` marks its command line so `processesTagged` finds it. */
export function stdioServer(tag: string = randomUUID()): McpStdioServerConfig {
  return { command: process.execPath, args: [serverScript, "--tag", tag] };
}

/** Pids of live processes whose command line contains `tag` (Linux: read from /proc). */
export async function processesTagged(tag: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    // A process may exit between listing and reading; an exited one counts as gone.
    const commandLine = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (commandLine.split("\0").includes(tag)) pids.push(Number(entry));
  }
  return pids;
}

/** Runs one call of `name` through the loop's executor, as the loop would. */
export async function runTool(
  tools: readonly Tool[],
  name: string,
  input: JsonObject = {},
): Promise<Omit<ToolResultMessage, "ts">> {
  const [result] = await executeToolCalls([{ type: "tool_call", id: "call", name, input }], {}, { tools });
  const { ts: _ts, ...rest } = result!;
  return rest;
}

/** The schema server (edge-case input schemas) over stdio. */
export function schemaServer(...extraTools: string[]): McpStdioServerConfig {
  return {
    command: process.execPath,
    args: [fileURLToPath(new URL("./schema-server.ts", import.meta.url)), ...extraTools],
  };
}
