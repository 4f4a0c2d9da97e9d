// What the bash tool hands a command and what it leaves behind: no credentials in its
// environment unless passed on purpose, and no process it started alive after it, not even
// one that left the process group (setsid, a double fork), nor after the CLI exits mid-command.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bashTool, runCommand } from "../../src/cli/tools/bash.ts";
import { createWorkspace } from "../../src/cli/tools/workspace.ts";
import { startFakeOpenAI } from "./fake-openai.ts";
import { cliEnvironment, isAlive, runCli, tempDirectory } from "./helpers.ts";
import { repositoryRoot } from "./terminal.ts";
import { text, toolsIn } from "./tool-calls.ts";

let workspace: ReturnType<typeof tempDirectory>;

const credentials = {
  ANTHROPIC_API_KEY: "sk-ant-test",
  OPENAI_API_KEY: "sk-test",
  GEMINI_API_KEY: "g-test",
  AWS_ACCESS_KEY_ID: "AKIATEST",
  AWS_SECRET_ACCESS_KEY: "aws-secret",
  AWS_SESSION_TOKEN: "aws-session",
  AWS_BEARER_TOKEN_BEDROCK: "bedrock-token",
  GOOGLE_APPLICATION_CREDENTIALS: "/tmp/creds.json",
  GH_TOKEN: "ghp_test",
  GITHUB_TOKEN: "ghs_test",
  NPM_TOKEN: "npm-test",
  MY_SERVICE_SECRET: "shh",
  DB_PASSWORD: "hunter2",
};
const harmless = { MY_SETTING: "kept", SSH_AUTH_SOCK: "/tmp/agent.sock", TOKENIZERS_PARALLELISM: "false" };

beforeEach(() => {
  workspace = tempDirectory("bash-contain-");
  Object.assign(process.env, credentials, harmless);
});

afterEach(() => {
  for (const name of [...Object.keys(credentials), ...Object.keys(harmless)]) delete process.env[name];
  workspace.remove();
});

const pidsIn = (path: string): number[] => readFileSync(path, "utf8").trim().split(/\s+/).map(Number);

describe("the environment of a command", () => {
  it("carries no credentials by default, and everything else", async () => {
    const result = await toolsIn(workspace.path).call("bash", { command: "env" });
    const names = text(result)
      .split("\n")
      .map((line) => line.slice(0, line.indexOf("=")));
    for (const name of Object.keys(credentials)) expect(names).not.toContain(name);
    for (const name of Object.keys(harmless)) expect(names).toContain(name);
    expect(names).toContain("PATH");
    expect(names).toContain("HOME");
  });

  it("passes credentials when asked: all of them, or the ones named", async () => {
    const all = await bashTool(createWorkspace(workspace.path), { passCredentials: true }).handler(
      { command: "echo $OPENAI_API_KEY $GH_TOKEN" },
      { signal: new AbortController().signal } as never,
    );
    expect(all).toBe("sk-test ghp_test\n");
    const named = await bashTool(createWorkspace(workspace.path), { passCredentials: ["GH_TOKEN"] }).handler(
      { command: 'echo "[$OPENAI_API_KEY] $GH_TOKEN"' },
      { signal: new AbortController().signal } as never,
    );
    expect(named).toBe("[] ghp_test\n");
  });
});

describe("processes a command leaves behind", () => {
  it("are killed when it ends, even those that left its process group", async () => {
    const pidFile = join(workspace.path, "pids");
    const command = `setsid sleep 1000 >/dev/null 2>&1 & echo $! >> ${pidFile}; (sleep 1000 >/dev/null 2>&1 & echo $! >> ${pidFile}); nohup sleep 1000 >/dev/null 2>&1 & echo $! >> ${pidFile}; setsid sleep 1000 & echo $! >> ${pidFile}; echo started`;
    const result = await toolsIn(workspace.path).call("bash", { command });
    expect(result.output).toBe("started\n");
    const pids = pidsIn(pidFile);
    expect(pids).toHaveLength(4);
    await expect.poll(() => pids.filter(isAlive), { timeout: 15_000 }).toStrictEqual([]);
  }, 30_000);

  it("are killed on timeout and on abort, even those that left its process group", async () => {
    const pidFile = join(workspace.path, "pids");
    const command = `setsid sleep 1000 >/dev/null 2>&1 & echo $! >> ${pidFile}; (sleep 1000 >/dev/null 2>&1 & echo $! >> ${pidFile}); sleep 1000`;
    const timedOut = await runCommand(command, { cwd: workspace.path, timeoutMs: 2000, killGraceMs: 500 });
    expect(timedOut.timedOut).toBe(true);
    const controller = new AbortController();
    const aborted = runCommand(command, {
      cwd: workspace.path,
      timeoutMs: 60_000,
      killGraceMs: 500,
      signal: controller.signal,
    });
    await expect
      .poll(
        () => {
          try {
            return pidsIn(pidFile).length;
          } catch {
            return 0;
          }
        },
        { timeout: 15_000 },
      )
      .toBe(4);
    controller.abort();
    expect((await aborted).aborted).toBe(true);
    const pids = pidsIn(pidFile);
    await expect.poll(() => pids.filter(isAlive), { timeout: 15_000 }).toStrictEqual([]);
  }, 60_000);

  it("are killed when the CLI process exits while the command runs", async () => {
    const pidFile = join(workspace.path, "pids");
    const script = `
      import { existsSync, readFileSync } from "node:fs";
      import { runCommand } from ${JSON.stringify(`${repositoryRoot}src/cli/tools/bash.ts`)};
      void runCommand(${JSON.stringify(`setsid sleep 1000 >/dev/null 2>&1 & echo $! >> ${pidFile}; (sleep 1000 >/dev/null 2>&1 & echo $! >> ${pidFile}); sleep 1000`)}, { cwd: ${JSON.stringify(workspace.path)}, timeoutMs: 60_000 });
      const poll = setInterval(() => {
        if (existsSync(${JSON.stringify(pidFile)}) && readFileSync(${JSON.stringify(pidFile)}, "utf8").trim().split(/\\s+/).length === 2) process.exit(0);
      }, 50);
    `;
    await new Promise<void>((resolve, reject) =>
      execFile(
        process.execPath,
        ["--conditions=simple-agent-loop-source", "--input-type=module", "-e", script],
        { timeout: 30_000 },
        (error) => (error === null ? resolve() : reject(error)),
      ),
    );
    const pids = pidsIn(pidFile);
    expect(pids).toHaveLength(2);
    await expect.poll(() => pids.filter(isAlive), { timeout: 15_000 }).toStrictEqual([]);
  }, 60_000);
});

describe("the CLI running bash for a model", () => {
  it("keeps its own API key from the command, and leaves no process behind", async () => {
    const server = await startFakeOpenAI();
    const home = tempDirectory("bash-contain-home-");
    try {
      const pidFile = join(workspace.path, "pids");
      const command = `env; setsid sleep 1000 >/dev/null 2>&1 & echo $! >> ${pidFile}; (sleep 1000 >/dev/null 2>&1 & echo $! >> ${pidFile})`;
      server.enqueue({ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "Done." });
      const environment = cliEnvironment(home.path, {
        OPENAI_BASE_URL: server.baseURL,
        OPENAI_API_KEY: "sk-cli-own-key",
        GH_TOKEN: "ghp_cli",
      });
      // Unconfined: the pids the command reports are the machine's (a sandbox's pid namespace has
      // its own; sandbox.test.ts covers what a sandboxed command leaves).
      const { code, stderr } = await runCli(
        ["--model", "test-model", "--allow", "bash", "--sandbox", "off", "look around"],
        {
          cwd: workspace.path,
          env: environment,
        },
      );
      expect(code, stderr).toBe(0);
      const toolResult = String(server.bodies()[1]!.messages.find((message) => message.role === "tool")?.content);
      expect(toolResult).toContain("PATH=");
      expect(toolResult).not.toContain("sk-cli-own-key");
      expect(toolResult).not.toContain("ghp_cli");
      const pids = pidsIn(pidFile);
      expect(pids).toHaveLength(2);
      await expect.poll(() => pids.filter(isAlive), { timeout: 15_000 }).toStrictEqual([]);
    } finally {
      await server.close();
      home.remove();
    }
  }, 60_000);
});
