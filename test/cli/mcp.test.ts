// MCP servers from <workspace>/.simple-agent-loop/mcp.json (or --mcp-config): their tools join
// the built-in ones as <server>__<tool>, and ask like any tool that may change things.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { cliEnvironment, runCli, tempDirectory } from "./helpers.ts";
import { repositoryRoot } from "./terminal.ts";

let server: FakeOpenAI;
let workspace: ReturnType<typeof tempDirectory>;
let home: ReturnType<typeof tempDirectory>;

beforeEach(async () => {
  server = await startFakeOpenAI();
  workspace = tempDirectory("mcp-ws-");
  home = tempDirectory("mcp-home-");
  // The workspace's path marks the server's command line, to find it among the processes.
  const echo = { command: process.execPath, args: ["--conditions=simple-agent-loop-source", `${repositoryRoot}test/cli/mcp-echo-server.ts`, workspace.path] };
  mkdirSync(join(workspace.path, ".simple-agent-loop"));
  writeFileSync(join(workspace.path, ".simple-agent-loop", "mcp.json"), JSON.stringify({ mcpServers: { echo } }));
});

afterEach(async () => {
  await server.close();
  workspace.remove();
  home.remove();
});

function processesMentioning(text: string): string[] {
  return readdirSync("/proc").filter((pid) => {
    try {
      return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(text);
    } catch {
      return false;
    }
  });
}

const run = (args: string[]) =>
  runCli(["--model", "test-model", ...args], { cwd: workspace.path, env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL }) });

describe("MCP tools", () => {
  it("offers the configured servers' tools to the model and runs them when allowed", async () => {
    server.enqueue({ toolCalls: [{ name: "echo__shout", arguments: { text: "hello" } }] }, { text: "It shouted." });
    const { code, stdout, stderr } = await run(["--allow", "echo__shout", "shout hello"]);
    expect(code, stderr).toBe(0);
    expect(stderr).toContain("MCP: echo (1 tool)");
    const offered = (server.bodies()[0]!.tools as { function: { name: string } }[]).map((offer) => offer.function.name);
    expect(offered).toStrictEqual(["read", "grep", "list", "edit", "write", "bash", "echo__shout"]);
    expect(stdout).toContain('✓ echo__shout {"text":"hello"}');
    expect(server.bodies()[1]!.messages.find((message) => message.role === "tool")?.content).toBe("HELLO");
    // The connection closed at exit: the server is gone.
    if (existsSync("/proc")) expect(processesMentioning(workspace.path)).toStrictEqual([]);
  });

  it("asks for them like any tool that may change things: without a terminal or a flag, they are denied", async () => {
    server.enqueue({ toolCalls: [{ name: "echo__shout", arguments: { text: "hello" } }] }, { text: "Denied." });
    const { code, stdout } = await run(["shout hello"]);
    expect(code).toBe(0);
    expect(stdout).toContain("✗ echo__shout");
    expect(stdout).toContain("--allow echo__shout");
  });

  it("takes another config file with --mcp-config, and fails clearly when it is missing", async () => {
    const missing = await run(["--mcp-config", "nope.json", "hi"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/the MCP config .*nope\.json does not exist/);
  });
});
