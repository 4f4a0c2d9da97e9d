// MCP servers from <workspace>/.simple-agent-loop/mcp.json (or --mcp-config): their tools join
// the built-in ones as <server>__<tool>, and ask like any tool that may change things. The
// workspace's own config starts its commands only once the user trusts it.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { cliEnvironment, runCli, tempDirectory } from "./helpers.ts";
import { repositoryRoot, startCliTerminal, type CliTerminal } from "./terminal.ts";

let server: FakeOpenAI;
let workspace: ReturnType<typeof tempDirectory>;
let home: ReturnType<typeof tempDirectory>;
let cli: CliTerminal | undefined;
const config = () => join(workspace.path, ".simple-agent-loop", "mcp.json");

beforeEach(async () => {
  server = await startFakeOpenAI();
  workspace = tempDirectory("mcp-ws-");
  home = tempDirectory("mcp-home-");
  // The workspace's path marks the server's command line, to find it among the processes.
  const echo = {
    command: process.execPath,
    args: ["--conditions=simple-agent-loop-source", `${repositoryRoot}test/cli/mcp-echo-server.ts`, workspace.path],
  };
  mkdirSync(join(workspace.path, ".simple-agent-loop"));
  writeFileSync(join(workspace.path, ".simple-agent-loop", "mcp.json"), JSON.stringify({ mcpServers: { echo } }));
});

afterEach(async () => {
  cli?.kill();
  cli = undefined;
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
  runCli(["--model", "test-model", ...args], {
    cwd: workspace.path,
    env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL }),
  });
const exitOf = async (terminal: CliTerminal): Promise<number> => {
  const code = await Promise.race([
    terminal.exited,
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 15_000)),
  ]);
  if (code === undefined) throw new Error(`the CLI did not exit; the screen:\n${terminal.screen()}`);
  return code;
};
const offeredTools = (request: number): string[] =>
  (server.bodies()[request]!.tools as { function: { name: string } }[]).map((offer) => offer.function.name);

describe("MCP tools", () => {
  it("offers the configured servers' tools to the model and runs them when allowed", async () => {
    server.enqueue({ toolCalls: [{ name: "echo__shout", arguments: { text: "hello" } }] }, { text: "It shouted." });
    const { code, stdout, stderr } = await run(["--mcp-config", config(), "--allow", "echo__shout", "shout hello"]);
    expect(code, stderr).toBe(0);
    expect(stderr).toContain("MCP: echo (1 tool)");
    expect(offeredTools(0)).toStrictEqual(["read", "grep", "list", "edit", "write", "bash", "echo__shout"]);
    expect(stdout).toContain('✓ echo__shout {"text":"hello"}');
    expect(server.bodies()[1]!.messages.find((message) => message.role === "tool")?.content).toBe("HELLO");
    // The connection closed at exit: the server is gone.
    if (existsSync("/proc")) expect(processesMentioning(workspace.path)).toStrictEqual([]);
  });

  it("asks for them like any tool that may change things: without a terminal or a flag, they are denied", async () => {
    server.enqueue({ toolCalls: [{ name: "echo__shout", arguments: { text: "hello" } }] }, { text: "Denied." });
    const { code, stdout, stderr } = await run(["--mcp-config", ".simple-agent-loop/mcp.json", "shout hello"]);
    expect(code).toBe(0);
    expect(stdout).toContain("✗ echo__shout");
    expect(stdout).toContain("no one is there to approve this call (no rule allows echo__shout)");
    expect(stderr).toContain("--allow echo__shout");
  });

  it("takes another config file with --mcp-config, and fails clearly when it is missing", async () => {
    const missing = await run(["--mcp-config", "nope.json", "hi"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/the MCP config .*nope\.json does not exist/);
  });

  it("does not start an untrusted workspace config's servers without a terminal, and says how to", async () => {
    server.enqueue({ text: "No MCP here." });
    const { code, stderr } = await run(["hi"]);
    expect(code, stderr).toBe(0);
    expect(stderr).toContain(`MCP: ${config()} is not trusted, so its servers were not started (echo).`);
    expect(stderr).toContain("--yes");
    expect(stderr).not.toContain("MCP: echo");
    expect(offeredTools(0)).toStrictEqual(["read", "grep", "list", "edit", "write", "bash"]);
    if (existsSync("/proc")) expect(processesMentioning(workspace.path)).toStrictEqual([]);
    expect(existsSync(join(home.path, "trusted-mcp.json"))).toBe(false);
  });

  it("--yes starts them (it runs every tool without asking), without remembering the config", async () => {
    server.enqueue({ text: "With MCP." });
    const { code, stderr } = await run(["--yes", "hi"]);
    expect(code, stderr).toBe(0);
    expect(stderr).toContain("MCP: echo (1 tool)");
    expect(offeredTools(0)).toContain("echo__shout");
    expect(existsSync(join(home.path, "trusted-mcp.json"))).toBe(false);
  });

  it(
    "on a terminal asks first: 'always' remembers the config until it changes, 'n' starts nothing",
    { timeout: 90_000 },
    async () => {
      server.enqueue({ text: "First." }, { text: "Second." }, { text: "Third." });
      const env = cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL });
      const open = (): CliTerminal => (cli = startCliTerminal(["--model", "test-model"], { cwd: workspace.path, env }));

      let terminal = open();
      await terminal.waitFor("Start them?", 20_000);
      expect(terminal.screen()).toContain(`echo: ${process.execPath} --conditions=simple-agent-loop-source`);
      terminal.type("a\r");
      await terminal.waitFor("MCP: echo (1 tool)", 20_000);
      await terminal.waitFor("> ", 20_000);
      terminal.type("hi\r");
      await terminal.waitFor("First.", 20_000);
      await terminal.waitFor(/\d\.\ds\n+> ?$/, 20_000);
      terminal.type("\x04");
      expect(await exitOf(terminal)).toBe(0);
      expect(offeredTools(0)).toContain("echo__shout");

      // Trusted: no question, the servers start.
      terminal = open();
      await terminal.waitFor("MCP: echo (1 tool)", 20_000);
      await terminal.waitFor("> ", 20_000);
      expect(terminal.screen()).not.toContain("Start them?");
      terminal.type("\x04");
      expect(await exitOf(terminal)).toBe(0);

      // Changed: asked again; no starts nothing.
      writeFileSync(
        config(),
        readFileSync(config(), "utf8")
          .replace("mcpServers", "mcpServers")
          .replace("}}", '}, "extra": { "url": "http://127.0.0.1:9/mcp" }}'),
      );
      terminal = open();
      await terminal.waitFor("Start them?", 20_000);
      expect(terminal.screen()).toContain("extra: http://127.0.0.1:9/mcp");
      terminal.type("n\r");
      await terminal.waitFor("is not trusted, so its servers were not started (echo, extra)", 20_000);
      await terminal.waitFor("> ", 20_000);
      terminal.type("hi\r");
      await terminal.waitFor("Second.", 20_000);
      await terminal.waitFor(/\d\.\ds\n+> ?$/, 20_000);
      terminal.type("\x04");
      expect(await exitOf(terminal)).toBe(0);
      expect(offeredTools(1)).not.toContain("echo__shout");
    },
  );
});
