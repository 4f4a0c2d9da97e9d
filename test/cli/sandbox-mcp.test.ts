// Stdio MCP servers the CLI starts run in the sandbox bash commands run in, with the network: the
// test's echo server, asked by the model to probe, cannot read the user's secrets or write outside
// the workspace (nor the workspace in read-only mode), and can connect out. --sandbox off starts
// it unconfined. Skipped, loudly, where bwrap cannot run (see sandbox-support.ts).
import { existsSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { cliEnvironment, runCli, tempDirectory } from "./helpers.ts";
import { fakeHome, support } from "./sandbox-support.ts";
import { repositoryRoot } from "./terminal.ts";

let workspace: ReturnType<typeof tempDirectory>;
let home: ReturnType<typeof fakeHome>;
let server: FakeOpenAI;
let config: string;

beforeEach(async () => {
  workspace = tempDirectory("sandbox-mcp-ws-");
  home = fakeHome();
  server = await startFakeOpenAI();
  config = join(home.path, "mcp.json");
  const echo = {
    command: process.execPath,
    args: ["--conditions=simple-agent-loop-source", `${repositoryRoot}test/cli/mcp-echo-server.ts`],
    env: { ECHO_PROBE: "1" },
  };
  writeFileSync(config, JSON.stringify({ mcpServers: { echo } }));
});

afterEach(async () => {
  await server.close();
  workspace.remove();
  home.remove();
});

// What the probe reported, line by line, after the CLI ran one call of it with `args`.
async function probe(args: string[]): Promise<Record<string, string>> {
  const input = {
    read: [join(home.path, ".ssh", "id_ed25519"), join(home.cliHome, "trusted.json"), join(home.path, "notes.txt")],
    write: [join(workspace.path, "inside.txt"), join(home.path, "outside.txt")],
    port: Number(new URL(server.baseURL).port),
  };
  server.enqueue({ toolCalls: [{ name: "echo__probe", arguments: input }] }, { text: "Done." });
  const { code, stderr } = await runCli(
    ["--model", "test-model", "--mcp-config", config, "--allow", "echo__probe", ...args, "probe"],
    {
      cwd: workspace.path,
      env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL, SIMPLE_AGENT_LOOP_HOME: home.cliHome }),
    },
  );
  expect(code, stderr).toBe(0);
  const result = server.bodies()[1]?.messages.find((message) => message.role === "tool")?.content;
  const report: Record<string, string> = {};
  for (const line of String(result).split("\n")) {
    const at = line.lastIndexOf(": ");
    report[line.slice(0, at).replace(home.path, "~").replace(workspace.path, "<workspace>")] = line.slice(at + 2);
  }
  return report;
}

describe.skipIf(!support.available)("MCP servers in the sandbox", () => {
  it("a stdio server cannot read secrets or write outside the workspace, and keeps the network", async () => {
    expect(await probe([])).toStrictEqual({
      "read ~/.ssh/id_ed25519": "ENOENT",
      "read ~/.simple-agent-loop/trusted.json": "ENOENT",
      "read ~/notes.txt": "plain notes",
      "write <workspace>/inside.txt": "ok",
      "write ~/outside.txt": "EROFS",
      [`connect ${new URL(server.baseURL).port}`]: "ok",
    });
    expect(existsSync(join(workspace.path, "inside.txt"))).toBe(true);
    expect(existsSync(join(home.path, "outside.txt"))).toBe(false);
  }, 90_000);

  it("in read-only mode it cannot write the workspace either; with --sandbox off it runs unconfined", async () => {
    const readOnly = await probe(["--sandbox", "read-only"]);
    expect(readOnly["write <workspace>/inside.txt"]).toBe("EROFS");
    expect(readOnly["read ~/.ssh/id_ed25519"]).toBe("ENOENT");
    server.requests.length = 0;
    const off = await probe(["--sandbox", "off"]);
    expect(off["read ~/.ssh/id_ed25519"]).toBe("SSH-SECRET-KEY");
    expect(off["write ~/outside.txt"]).toBe("ok");
  }, 120_000);

  it("a server that fails to start is said to run in the sandbox only when it is a stdio one", async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const listener = createServer().listen(0, "127.0.0.1", () => {
        const { port } = listener.address() as AddressInfo;
        listener.close(() => resolve(port));
      });
    });
    const start = async (servers: Record<string, unknown>): Promise<string> => {
      writeFileSync(config, JSON.stringify({ mcpServers: servers }));
      const { code, stderr } = await runCli(["--model", "test-model", "--mcp-config", config, "hi"], {
        cwd: workspace.path,
        env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL, SIMPLE_AGENT_LOOP_HOME: home.cliHome }),
      });
      expect(code, stderr).toBe(1);
      return stderr;
    };
    const remote = await start({ remote: { url: `http://127.0.0.1:${closedPort}/mcp` } });
    expect(remote).toContain('"remote"');
    expect(remote).not.toContain("sandbox");
    const local = await start({ local: { command: process.execPath, args: ["-e", "process.exit(3)"] } });
    expect(local).toContain('"local"');
    expect(local).toContain("stdio servers run in the sandbox");
    expect(server.requests).toHaveLength(0);
  }, 90_000);
});
