import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadSession } from "simple-agent-loop/store";
import { detectSandbox } from "../src/cli/sandbox/detect-sandbox.ts";
import { startCliTerminal } from "./cli/terminal.ts";
import { sse, sseHeaders, startReplayServer, type ReplayServer } from "./providers/replay-server.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

// On a machine without a working sandbox (no bubblewrap: a fresh machine before .ci/run installs
// it), every start warns that bash runs unconfined; that line is right there, and only there.
const sandbox = await detectSandbox();
function withoutSandboxWarning(stderr: string): string {
  const warning = /^warning: no sandbox for bash: .*\n/m;
  expect(warning.test(stderr), "the no-sandbox warning, exactly where bash has no sandbox").toBe(!sandbox.available);
  return stderr.replace(warning, "");
}
const run = promisify(execFile);

/** The command of `npm start` (package.json "start"), after `node`. */
const startCommand = (
  JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: { start: string } }
).scripts.start
  .split(" ")
  .slice(1);

// A command line as a user's shell in the clone runs it, with `input` on its stdin.
function shell(
  command: string,
  environment: Record<string, string>,
  input = "",
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      "/bin/sh",
      ["-c", command],
      { cwd: root, env: environment, timeout: 120_000 },
      (error, stdout, stderr) =>
        error === null ? resolve({ stdout, stderr }) : reject(Object.assign(error, { stdout, stderr })),
    );
    child.stdin?.end(input);
  });
}

// The environment of a user's shell, without any provider configured.
function cleanEnvironment(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(ANTHROPIC|OPENAI|GEMINI|GOOGLE)_/.test(name)),
  ) as Record<string, string>;
}

// One Anthropic Messages stream: the blocks given, then the stop reason.
function anthropicMessage(content: unknown[], stopReason: string): string[] {
  return sse(
    [
      { type: "message_start", message: { usage: { input_tokens: 10, output_tokens: 1 } } },
      ...content.flatMap((block, index) => [
        { type: "content_block_start", index, content_block: block },
        { type: "content_block_stop", index },
      ]),
      { type: "message_delta", delta: { stop_reason: stopReason }, usage: { output_tokens: 5 } },
      { type: "message_stop" },
    ],
    { withEventNames: true },
  );
}

describe("npm start: the CLI with --provider auto in this repository", () => {
  let server: ReplayServer;
  let home: string;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "demo-home-"));
  });
  afterEach(() => {
    rmSync(home, { recursive: true, force: true });
  });

  const start = (environment: Record<string, string>, given: string[] = []) =>
    run(process.execPath, [...startCommand, ...given], {
      cwd: root,
      env: { ...cleanEnvironment(), SIMPLE_AGENT_LOOP_HOME: home, ...environment },
    });

  it("without a provider configured, says what to set and runs the offline demo through the real tools", async () => {
    const { stdout, stderr } = await start({});
    expect(withoutSandboxWarning(stderr)).toBe(
      "No model configured (set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL for a real one): running the offline demo model.\n",
    );
    expect(stdout).toContain("demo (offline, scripted)");
    expect(stdout).toMatch(/✓ list \. \(\d+ entries\)/);
    expect(stdout).toMatch(/✓ read README\.md \(\d+ (of \d+ )?lines\)/);
    expect(stdout).toMatch(
      /The workspace has \d+ entries at its top level: \d+ directories \(.*\) and \d+ files \(.*\)\. README\.md is titled "simple-agent-loop"/,
    );
    expect(stdout).toMatch(/tokens [\d,]+ in · [\d,]+ out · \d+\.\ds/);
    // The session is saved: the task, the tool calls and their results, the answer.
    const [file] = readdirSync(join(home, "sessions"));
    const session = await loadSession(join(home, "sessions", file!));
    const calls = session.messages.flatMap((message) =>
      "type" in message && message.type === "tool_call" ? [message.name] : [],
    );
    expect(calls).toStrictEqual(["list", "read"]);
    expect(session.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: expect.stringContaining("The workspace has"),
      stopReason: "end_turn",
    });
  });

  it('runs a task given after -- instead of the demo task (npm start -- "list the docs folder")', async () => {
    const { stdout } = await start({}, ["list the docs folder"]);
    expect(stdout).toContain("demo (offline, scripted)");
    const [file] = readdirSync(join(home, "sessions"));
    const session = await loadSession(join(home, "sessions", file!));
    const tasks = session.messages.flatMap((message) =>
      "role" in message && message.role === "user" ? [message.content] : [],
    );
    expect(tasks).toStrictEqual(["list the docs folder"]);
    // The demo does that part of it, and says all it does.
    expect(stdout).toMatch(/✓ list docs \(\d+ entries\)/);
    // Named as the folder holds them (the first in order), whatever pages docs/ gains.
    const [firstPage] = readdirSync(join(root, "docs")).sort();
    expect(stdout).toContain(`docs has ${readdirSync(join(root, "docs")).length} entries at its top level`);
    expect(stdout).toMatch(new RegExp(`\\d+ files \\(${firstPage!.replaceAll(".", "\\.")}, `));
    expect(stdout).toContain("All it does is list the folder your task names");
  });

  it("ends with the command that goes on from a clone, npm start -- --resume <id>, which, run as printed, lands in the same session", async () => {
    const environment = { ...cleanEnvironment(), SIMPLE_AGENT_LOOP_HOME: home };
    const first = await shell("npm start -- 'list the docs folder'", environment);
    const hint = /To go on with this session: (.+)\n/.exec(first.stdout)?.[1];
    const [file] = readdirSync(join(home, "sessions"));
    const id = file!.replace(/\.jsonl$/, "");
    expect(hint).toBe(`npm start -- --resume ${id}`);
    // As printed; no terminal here, so the prompt reads the next task from stdin (on a terminal it opens the prompt).
    const second = await shell(hint!, environment, "read the README");
    expect(second.stdout).toContain(`session ${id} (resumed`);
    expect(second.stdout).toContain(`To go on with this session: npm start -- --resume ${id}`);
    expect(readdirSync(join(home, "sessions")).filter((name) => name.endsWith(".jsonl"))).toStrictEqual([file]);
    const session = await loadSession(join(home, "sessions", file!));
    const tasks = session.messages.flatMap((message) =>
      "role" in message && message.role === "user" ? [message.content] : [],
    );
    expect(tasks).toStrictEqual(["list the docs folder", "read the README"]);
  });

  it(
    "on a terminal, without a task, opens the prompt; so does the resume hint it prints",
    { timeout: 180_000 },
    async () => {
      const environment = { ...cleanEnvironment(), SIMPLE_AGENT_LOOP_HOME: home };
      const first = startCliTerminal([], { cwd: root, env: environment, script: "src/cli/start.ts" });
      try {
        await first.waitFor("Type a task and press Enter", 60_000);
        first.type("list the docs folder\r");
        await first.waitFor(/docs has \d+ entries/, 60_000);
        // The prompt is back.
        await first.waitFor(/tokens [^\n]*\n+> ?$/, 60_000);
        first.type("\x04");
        expect(await first.exited).toBe(0);
      } finally {
        first.kill();
      }
      const hint = /To go on with this session: (.+)/.exec(first.screen())![1]!.trim();
      expect(hint).toMatch(/^npm start -- --resume \S+$/);
      const id = hint.split(" ").at(-1)!;
      const second = startCliTerminal(["--resume", id], { cwd: root, env: environment, script: "src/cli/start.ts" });
      try {
        await second.waitFor(`session ${id} (resumed`, 60_000);
        await second.waitFor("Type a task and press Enter", 60_000);
        second.type("\x04");
        expect(await second.exited).toBe(0);
      } finally {
        second.kill();
      }
    },
  );

  it("with ANTHROPIC_API_KEY set, talks to the Messages API (here a local server) and runs the tool", async () => {
    server.enqueue(
      {
        headers: sseHeaders,
        chunks: anthropicMessage([{ type: "tool_use", id: "toolu_1", name: "list", input: {} }], "tool_use"),
      },
      { headers: sseHeaders, chunks: anthropicMessage([{ type: "text", text: "I see the files." }], "end_turn") },
    );
    const { stdout, stderr } = await start({
      ANTHROPIC_API_KEY: "sk-ant-demo-test-key",
      ANTHROPIC_BASE_URL: server.origin,
      ANTHROPIC_MODEL: "claude-test",
    });
    expect(withoutSandboxWarning(stderr)).toBe("");
    expect(stdout).toContain("anthropic claude-test");
    expect(stdout).toMatch(/✓ list \. \(\d+ entries\)/);
    expect(stdout).toContain("I see the files.");
    const first = server.requests.at(-2)!;
    expect(first.headers["x-api-key"]).toBe("sk-ant-demo-test-key");
    expect((first.body as { model: string }).model).toBe("claude-test");
    const second = server.requests.at(-1)?.body as { messages: { content: { type: string; content?: string }[] }[] };
    expect(second.messages.at(-1)?.content[0]).toMatchObject({
      type: "tool_result",
      content: expect.stringContaining("package.json"),
    });
  });
});

// The smallest real agent (list files, then answer), kept as an example of the library (the CLI is the demo now).
describe("examples/list-files.ts", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });

  const listFiles = (environment: Record<string, string>) =>
    run(process.execPath, ["--conditions=simple-agent-loop-source", "examples/list-files.ts", root], {
      cwd: root,
      env: { ...cleanEnvironment(), ...environment },
    });

  it("without a provider configured, says so and runs the scripted model through the real tool", async () => {
    const { stdout, stderr } = await listFiles({});
    expect(stderr).toContain("No model configured (set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL)");
    expect(stdout).toContain("[demo] tool_call list_files {}");
    expect(stdout).toMatch(/Answer: The workspace contains .*package\.json/);
  });

  it("with ANTHROPIC_API_KEY set, talks to the Messages API (here a local server) and runs the tool", async () => {
    server.enqueue(
      {
        headers: sseHeaders,
        chunks: anthropicMessage([{ type: "tool_use", id: "toolu_1", name: "list_files", input: {} }], "tool_use"),
      },
      { headers: sseHeaders, chunks: anthropicMessage([{ type: "text", text: "I see the files." }], "end_turn") },
    );
    const { stdout, stderr } = await listFiles({
      ANTHROPIC_API_KEY: "sk-ant-demo-test-key",
      ANTHROPIC_BASE_URL: server.origin,
      ANTHROPIC_MODEL: "claude-test",
    });
    expect(stderr).toContain("Model: Anthropic claude-test");
    expect(stdout).toMatch(/tool_result toolu_1: .*package\.json/);
    expect(stdout).toContain("Answer: I see the files.");
    const second = server.requests.at(-1)?.body as { messages: { content: { type: string; content?: string }[] }[] };
    expect(second.messages.at(-1)?.content[0]).toMatchObject({
      type: "tool_result",
      content: expect.stringContaining("package.json"),
    });
  });
});
