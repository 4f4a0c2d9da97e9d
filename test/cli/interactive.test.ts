// The interactive prompt as a user drives it: in a pseudo-terminal, against a scripted
// OpenAI-compatible server, with the workspace and the sessions in temporary directories.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadSession } from "simple-agent-loop/store";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { cliEnvironment, tempDirectory } from "./helpers.ts";
import { startCliTerminal, type CliTerminal } from "./terminal.ts";

let server: FakeOpenAI;
let workspace: ReturnType<typeof tempDirectory>;
let home: ReturnType<typeof tempDirectory>;
let cli: CliTerminal | undefined;

beforeEach(async () => {
  server = await startFakeOpenAI();
  workspace = tempDirectory("cli-workspace-");
  home = tempDirectory("cli-home-");
});

afterEach(async () => {
  cli?.kill();
  cli = undefined;
  await server.close();
  workspace.remove();
  home.remove();
});

const spinnerFrame = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;

function start(args: string[] = []): CliTerminal {
  cli = startCliTerminal(["--model", "test-model", ...args], {
    cwd: workspace.path,
    env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL }),
  });
  return cli;
}

/** Starts the CLI, waits for its prompt and reads the new session's id from the header. */
async function startAtPrompt(): Promise<{ terminal: CliTerminal; id: string }> {
  const terminal = start();
  const id = /session (\S+) \(new\)/.exec(await terminal.waitFor(/session (\S+) \(new\)/))![1]!;
  await terminal.waitFor("> ");
  return { terminal, id };
}

/** Starts the CLI and a task whose model stream shows "Thinking about it" and then hangs. */
async function startHangingTask(): Promise<{ terminal: CliTerminal; id: string }> {
  server.enqueue({ hangAfter: "Thinking about it" });
  const started = await startAtPrompt();
  started.terminal.type("a long task\r");
  await started.terminal.waitFor("Thinking about it");
  return started;
}

/** The session `id` as the CLI stored it. */
function storedSession(id: string): ReturnType<typeof loadSession> {
  return loadSession(join(home.path, "sessions", `${id}.jsonl`));
}

describe("the interactive prompt", () => {
  it(
    "runs a task that reads and edits a file, asking once with 'always', then a follow-up in the same session",
    { timeout: 90_000 },
    async () => {
      writeFileSync(join(workspace.path, "notes.txt"), "hello world\n");
      server.enqueue(
        { text: "Let me read the notes first.", toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] },
        { toolCalls: [{ name: "edit", arguments: { path: "notes.txt", oldText: "hello", newText: "goodbye" } }] },
        { toolCalls: [{ name: "edit", arguments: { path: "notes.txt", oldText: "world", newText: "moon" } }] },
        { text: "Done: the notes now say goodbye moon.", usage: { prompt_tokens: 1234, completion_tokens: 56 } },
        { text: "You asked me to update the notes." },
      );
      const terminal = start();
      await terminal.waitFor(/session \d{8}-\d{6}-[0-9a-f]{6} \(new\)/);
      await terminal.waitFor("> ");
      terminal.type("update the notes\r");
      await terminal.waitFor("Let me read the notes first.");
      await terminal.waitFor("✓ read notes.txt (1 line)");
      await terminal.waitFor("Allow edit?");
      expect(terminal.screen()).toContain("- hello");
      expect(terminal.screen()).toContain("+ goodbye");
      terminal.type("a\r");
      const screen = await terminal.waitFor("Done: the notes now say goodbye moon.");
      await terminal.waitFor(/tokens [\d,]+ in · [\d,]+ out · \d+\.\ds/);
      expect(screen).toContain("✓ edit notes.txt (−1 +1 lines)");
      // The second edit ran without asking.
      expect(terminal.screen().match(/Allow edit\?/g)).toHaveLength(1);
      expect(readFileSync(join(workspace.path, "notes.txt"), "utf8")).toBe("goodbye moon\n");

      terminal.type("what did I ask?\r");
      await terminal.waitFor("You asked me to update the notes.");
      const followUp = server.bodies()[4]!;
      const contents = followUp.messages.map((message) => message.content);
      expect(contents).toContain("update the notes");
      expect(contents).toContain("Done: the notes now say goodbye moon.");
      expect(contents.at(-1)).toBe("what did I ask?");
      expect(
        followUp.messages.some(
          (message) => message.role === "tool" && String(message.content).includes("Edited notes.txt"),
        ),
      ).toBe(true);

      // Keys typed before the prompt is back are not read by it: wait for it.
      await terminal.waitFor(/You asked me to update the notes\.[^]*\n> $/);
      expect(terminal.screen()).not.toMatch(spinnerFrame);
      terminal.type("\x04");
      expect(await terminal.exited).toBe(0);
    },
  );

  it("shows a spinner while the model is silent, on its own line, and erases it", { timeout: 90_000 }, async () => {
    server.enqueue({ hangAfter: "" });
    const terminal = start();
    await terminal.waitFor("> ");
    terminal.type("think hard\r");
    await terminal.waitFor(new RegExp(`\n${spinnerFrame.source} thinking`));
    terminal.type("\x03");
    await terminal.waitFor(/Interrupted[^]*\n> $/);
    expect(terminal.screen()).not.toMatch(spinnerFrame);
    expect(terminal.screen()).not.toContain("thinking");
    terminal.type("\x04");
    expect(await terminal.exited).toBe(0);
  });

  it("sends the reason the user typed with a deny to the model, as an error result", { timeout: 90_000 }, async () => {
    server.enqueue(
      { toolCalls: [{ name: "write", arguments: { path: "x.txt", content: "x\n" } }] },
      { text: "Understood, I will not write it." },
    );
    const terminal = start();
    await terminal.waitFor("> ");
    terminal.type("write x\r");
    await terminal.waitFor("Allow write?");
    expect(terminal.screen()).toMatch(/● write x\.txt\n {2}1 line\n {2}│ x\n/);
    terminal.type("n\r");
    await terminal.waitFor("Why?");
    terminal.type("not now, use y.txt\r");
    await terminal.waitFor("Understood, I will not write it.");
    expect(terminal.screen()).toContain("✗ write x.txt: Rejected: not now, use y.txt");
    const toolMessage = server.bodies()[1]!.messages.find((message) => message.role === "tool");
    expect(String(toolMessage?.content)).toContain("not now, use y.txt");
    expect(() => readFileSync(join(workspace.path, "x.txt"))).toThrow();
    await terminal.waitFor(/Understood, I will not write it\.[^]*\n> $/);
    terminal.type("/exit\r");
    expect(await terminal.exited).toBe(0);
  });

  it(
    "Ctrl-C during a hanging model stream aborts the turn, the prompt comes back, a second Ctrl-C exits 130",
    { timeout: 90_000 },
    async () => {
      const { terminal, id } = await startHangingTask();
      terminal.type("\x03");
      await terminal.waitFor("Interrupted");
      await terminal.waitFor(/Interrupted[^]*\n> $/);
      // The stream ended before the usage it would have reported.
      expect(terminal.screen()).toMatch(/\ntokens unknown · \d+\.\ds\n/);
      const session = await storedSession(id);
      // What the user saw stream stays in the session.
      expect(session.messages.at(-1)).toMatchObject({
        role: "assistant",
        content: "Thinking about it",
        stopReason: "aborted",
      });
      expect(session.messages.map((message) => ("role" in message ? message.role : message.type))).toStrictEqual([
        "system",
        "user",
        "assistant",
      ]);
      await expect.poll(() => server.requests[0]?.clientClosed, { timeout: 10_000 }).toBe(true);
      terminal.type("\x03");
      expect(await terminal.exited).toBe(130);
    },
  );

  it(
    "reports the time the user took to answer a prompt apart from the task's working time",
    { timeout: 90_000 },
    async () => {
      server.enqueue(
        { toolCalls: [{ name: "write", arguments: { path: "x.txt", content: "x\n" } }] },
        { text: "Written." },
      );
      const terminal = start();
      await terminal.waitFor("> ");
      terminal.type("write x\r");
      await terminal.waitFor("Allow write?");
      await new Promise((resolve) => setTimeout(resolve, 3000));
      terminal.type("y\r");
      const screen = await terminal.waitFor(/tokens [\d,]+ in · [\d,]+ out · .*\n/);
      const [, working, waiting] =
        /tokens [\d,]+ in · [\d,]+ out · (\d+\.\d)s \(\+(\d+\.\d)s waiting for you\)/.exec(screen) ?? [];
      expect(Number(waiting), screen).toBeGreaterThanOrEqual(2.9);
      expect(Number(working)).toBeLessThan(Number(waiting));
      await terminal.waitFor(/waiting for you\)[^]*\n> $/);
      terminal.type("/exit\r");
      expect(await terminal.exited).toBe(0);
    },
  );

  it(
    "writes no session when left without a task; after a task, says on exit how to resume it",
    { timeout: 90_000 },
    async () => {
      const sessionFiles = (): string[] =>
        existsSync(join(home.path, "sessions")) ? readdirSync(join(home.path, "sessions")) : [];
      const idle = start();
      await idle.waitFor("> ");
      expect(sessionFiles()).toStrictEqual([]);
      // Looking at the context measures the system prompt without storing the session.
      idle.type("/context\r");
      await idle.waitFor(/system +\d+[^]*total +[\d,]+ tokens[^]*\n> $/);
      idle.type("/exit\r");
      expect(await idle.exited).toBe(0);
      expect(idle.screen()).not.toContain("--resume");
      expect(sessionFiles()).toStrictEqual([]);
      const ctrlD = start();
      await ctrlD.waitFor("> ");
      ctrlD.type("\x04");
      expect(await ctrlD.exited).toBe(0);
      expect(sessionFiles()).toStrictEqual([]);
      server.enqueue({ text: "Hello there." });
      const { terminal, id } = await startAtPrompt();
      terminal.type("say hello\r");
      await terminal.waitFor("Hello there.");
      expect(sessionFiles()).toContain(`${id}.jsonl`);
      await terminal.waitFor(/Hello there\.[^]*\n> $/);
      terminal.type("\x04");
      await terminal.waitFor(`To go on with this session: npx simple-agent-loop --resume ${id}`);
      expect(await terminal.exited).toBe(0);
    },
  );

  it(
    "a line typed and entered while a task runs is shown as queued and joins the running task: the model gets it once it has answered",
    { timeout: 90_000 },
    async () => {
      server.enqueue(
        { text: "Working on the first task, slowly, piece by piece, until it is done.", chunkDelayMs: 400 },
        { text: "Second one done." },
      );
      const { terminal, id } = await startAtPrompt();
      terminal.type("first task\r");
      await terminal.waitFor("Working on");
      terminal.type("second task\r");
      await terminal.waitFor("(queued: second task — goes to the model once it has answered");
      // The line is shown as it enters the run, after the first answer, and the run goes on: one
      // task, so one line of tokens and time at its end.
      const screen = await terminal.waitFor(/Second one done\.[^]*\n> $/);
      expect(screen).toMatch(/until it is done\.\s*\n> second task\n[^]*Second one done\./);
      expect(screen.match(/tokens \S+ in/g)).toHaveLength(1);
      const session = await storedSession(id);
      const users = session.messages.filter((message) => "role" in message && message.role === "user");
      expect(users.map((message) => ("content" in message ? message.content : undefined))).toStrictEqual([
        "first task",
        "second task",
      ]);
      terminal.type("\x04");
      expect(await terminal.exited).toBe(0);
    },
  );

  it(
    "Esc takes a queued line back, then Ctrl-C interrupts the task; nothing of the line runs",
    { timeout: 90_000 },
    async () => {
      const { terminal, id } = await startHangingTask();
      terminal.type("never mind\r");
      await terminal.waitFor("(queued: never mind");
      terminal.type("\x1b");
      await terminal.waitFor("(queued input taken back)");
      terminal.type("\x03");
      await terminal.waitFor(/Interrupted[^]*\n> $/);
      const session = await storedSession(id);
      expect(JSON.stringify(session.messages)).not.toContain("never mind");
      expect(server.requests).toHaveLength(1);
      terminal.type("\x04");
      expect(await terminal.exited).toBe(0);
    },
  );
});
