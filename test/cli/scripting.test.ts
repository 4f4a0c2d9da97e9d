// The CLI without a terminal, as scripts use it: one task as an argument or on stdin, --json
// output that is valid JSONL ending in an explicit done or error line, exit codes, and
// permissions that only flags can give.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { noModelMessage } from "../../src/cli/provider.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { cliEnvironment, runCli, tempDirectory } from "./helpers.ts";
import { repositoryRoot } from "./terminal.ts";
import { launchCommand } from "../../src/cli/launch-command.ts";

let server: FakeOpenAI;
let workspace: ReturnType<typeof tempDirectory>;
let home: ReturnType<typeof tempDirectory>;

beforeEach(async () => {
  server = await startFakeOpenAI();
  workspace = tempDirectory("script-ws-");
  home = tempDirectory("script-home-");
});

afterEach(async () => {
  await server.close();
  workspace.remove();
  home.remove();
});

const run = (args: string[], input?: string) =>
  runCli(["--model", "test-model", ...args], {
    cwd: workspace.path,
    env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL }),
    ...(input === undefined ? {} : { input }),
  });

function jsonLines(stdout: string): Record<string, unknown>[] {
  expect(stdout.endsWith("\n")).toBe(true);
  return stdout
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("--json", () => {
  it("writes only JSONL: a session-start line, the agent's events, and a done line with the answer", async () => {
    writeFileSync(join(workspace.path, "a.txt"), "alpha\n");
    server.enqueue({ toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] }, { text: "It says alpha." });
    const { code, stdout, stderr } = await run(["--json", "what does a.txt say?"]);
    expect(code).toBe(0);
    const lines = jsonLines(stdout);
    const start = lines[0]!;
    expect(start).toMatchObject({
      type: "session-start",
      resumed: false,
      workspace: workspace.path,
      provider: "openai",
      model: "test-model",
    });
    expect(stderr).toContain(`session ${String(start.sessionId)}`);
    const types = lines.map((line) => line.type);
    expect(types).toContain("run-start");
    expect(types).toContain("text-delta");
    expect(lines.find((line) => line.type === "tool-execution-end")).toMatchObject({
      name: "read",
      result: { output: "     1\talpha" },
    });
    expect(types.at(-2)).toBe("run-end");
    expect(lines.at(-1)).toMatchObject({
      type: "done",
      outcome: "done",
      sessionId: start.sessionId,
      answer: "It says alpha.",
      usage: { inputTokens: 200, outputTokens: 40 },
    });
    // Every duration is whole milliseconds.
    const durations = stdout.match(/"\w+Ms":[\d.e+-]+/g) ?? [];
    expect(durations.length).toBeGreaterThan(5);
    for (const duration of durations) expect(duration).toMatch(/^"\w+Ms":\d+$/);
  });

  it("ends with an error line and exit code 1 when the provider refuses the request", async () => {
    server.enqueue({ status: 401, message: "Incorrect API key provided" });
    const { code, stdout } = await run(["--json", "hello"]);
    expect(code).toBe(1);
    const last = jsonLines(stdout).at(-1);
    expect(last).toMatchObject({
      type: "error",
      outcome: "error",
      status: 401,
      message: expect.stringContaining("Incorrect API key provided"),
    });
  });

  it("reads the task from stdin when there is no argument", async () => {
    server.enqueue({ text: "Hi." });
    const { code, stdout } = await run(["--json"], "say hi\n");
    expect(code).toBe(0);
    expect(server.bodies()[0]!.messages.at(-1)).toMatchObject({ role: "user", content: "say hi" });
    expect(jsonLines(stdout).at(-1)).toMatchObject({ type: "done", answer: "Hi." });
  });
});

describe("--json when the run cannot start or nobody reads", () => {
  it("ends with an error line when the run cannot start (no model, no such session)", async () => {
    const noModel = await runCli(["--json", "hello"], { cwd: workspace.path, env: cliEnvironment(home.path) });
    expect(noModel.code).toBe(1);
    expect(jsonLines(noModel.stdout)).toStrictEqual([{ type: "error", outcome: "error", message: noModelMessage }]);
    const noSession = await run(["--json", "--resume", "20990101-000000-abcdef", "hello"]);
    expect(noSession.code).toBe(1);
    expect(jsonLines(noSession.stdout).at(-1)).toMatchObject({
      type: "error",
      message: expect.stringContaining("no session 20990101-000000-abcdef"),
    });
  });

  it("ends quietly when the reader of its output goes away (| head -1)", async () => {
    const child = spawn(
      process.execPath,
      [
        "--conditions=simple-agent-loop-source",
        `${repositoryRoot}src/cli/main.ts`,
        "--provider",
        "demo",
        "--json",
        "hello",
      ],
      {
        cwd: workspace.path,
        env: cliEnvironment(home.path),
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    // Read the first line, then close the pipe while the demo is still streaming.
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
    child.stdout.destroy();
    expect(await exited).toBe(141);
    expect(stderr).not.toMatch(/EPIPE|Unhandled/);
  });
});

describe("--provider demo", () => {
  it("says an empty workspace is empty", async () => {
    const { code, stdout } = await runCli(["--provider", "demo", "what is here?"], {
      cwd: workspace.path,
      env: cliEnvironment(home.path),
    });
    expect(code).toBe(0);
    expect(stdout).toContain("✓ list . (empty)");
    expect(stdout).toContain("The workspace is empty.");
  });
});

describe("permissions without a terminal", () => {
  it("denies a write no rule allows (the policy's human is deny), saying why and which flag allows it", async () => {
    server.enqueue(
      { toolCalls: [{ name: "write", arguments: { path: "x.txt", content: "x" } }] },
      { text: "I could not write." },
    );
    const { code, stdout, stderr } = await run(["create x.txt"]);
    expect(code).toBe(0);
    expect(stdout).toContain("✗ write x.txt: Denied: no one is there to approve this call (no rule allows write)");
    expect(stderr).toContain("write was denied");
    expect(stderr).toContain("--allow write");
    expect(String(server.bodies()[1]!.messages.find((message) => message.role === "tool")?.content)).toContain(
      "no one is there to approve this call",
    );
    expect(existsSync(join(workspace.path, "x.txt"))).toBe(false);
  });

  it("runs it with --allow", async () => {
    server.enqueue(
      { toolCalls: [{ name: "write", arguments: { path: "x.txt", content: "x\n" } }] },
      { text: "Written." },
    );
    const { code, stdout } = await run(["--allow", "write", "create x.txt"]);
    expect(code).toBe(0);
    expect(stdout).toContain("✓ write x.txt (1 line)");
    expect(stdout).toMatch(/tokens 200 in · 40 out · \d+\.\ds/);
    expect(readFileSync(join(workspace.path, "x.txt"), "utf8")).toBe("x\n");
  });
});

describe("exit codes and messages", () => {
  it("says what to set and exits 1 when no model is configured", async () => {
    const { code, stdout, stderr } = await runCli(["hello"], { cwd: workspace.path, env: cliEnvironment(home.path) });
    expect({ code, stdout }).toStrictEqual({ code: 1, stdout: "" });
    expect(stderr).toBe(`simple-agent-loop: ${noModelMessage}\n`);
  });

  it("exits 2 for a usage error, 0 for --help and --version", async () => {
    const bad = await run(["--provider", "skynet", "hello"]);
    expect(bad.code).toBe(2);
    // The hint starts as the user can start the CLI where they are (a bin on this PATH, else npx).
    const start = launchCommand(cliEnvironment(home.path));
    expect(bad.stderr).toContain(`unknown provider skynet`);
    expect(bad.stderr).toContain(`\nRun ${start} --help for the options.\n`);
    const unknown = await run(["--bogus", "hello"]);
    expect(unknown).toMatchObject({ code: 2, stdout: "" });
    expect(unknown.stderr).toBe(
      `simple-agent-loop: unknown option --bogus; a task that starts with - goes after --\nRun ${start} --help for the options.\n`,
    );
    const help = await run(["--help"]);
    expect(help).toMatchObject({
      code: 0,
      stdout: expect.stringContaining("Usage: simple-agent-loop [options] [task]"),
    });
    const version = await run(["--version"]);
    expect(version).toMatchObject({ code: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+/) });
  });

  it("exits 1 with the provider's message when a task fails", async () => {
    server.enqueue({ status: 401, message: "Incorrect API key provided" });
    const { code, stderr } = await run(["hello"]);
    expect(code).toBe(1);
    expect(stderr).toContain("✗ Error:");
    expect(stderr).toContain("Incorrect API key provided");
  });
});
