// /rewind and --rewind as a user drives them: in a pseudo-terminal (and, for --rewind --yes,
// without one), against the scripted OpenAI-compatible server, with the workspace and the
// sessions in temporary directories.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadSession } from "simple-agent-loop/store";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { cliEnvironment, runCli, tempDirectory } from "./helpers.ts";
import { startCliTerminal, type CliTerminal } from "./terminal.ts";

let server: FakeOpenAI;
let workspace: ReturnType<typeof tempDirectory>;
let home: ReturnType<typeof tempDirectory>;
let cli: CliTerminal | undefined;

beforeEach(async () => {
  server = await startFakeOpenAI();
  workspace = tempDirectory("cli-rewind-workspace-");
  home = tempDirectory("cli-rewind-home-");
});

afterEach(async () => {
  cli?.kill();
  cli = undefined;
  await server.close();
  workspace.remove();
  home.remove();
});

const environment = (): Record<string, string> => cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL });
// bash runs unasked only with --sandbox off where bwrap cannot run; the rewind is the point here.
const allowed = ["--model", "test-model", "--allow", "read,edit,write,bash", "--sandbox", "off"];

function start(args: string[] = []): CliTerminal {
  cli = startCliTerminal([...allowed, ...args], { cwd: workspace.path, env: environment() });
  return cli;
}

const read = (name: string): string => readFileSync(join(workspace.path, name), "utf8");
const exists = (name: string): boolean => existsSync(join(workspace.path, name));

// Turn 1 edits notes.txt; turn 2 edits it again, creates new.txt and runs a command that writes bash.txt.
function scriptTwoTurns(): void {
  writeFileSync(join(workspace.path, "notes.txt"), "hello world\n");
  server.enqueue(
    { toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] },
    { toolCalls: [{ name: "edit", arguments: { path: "notes.txt", oldText: "hello", newText: "goodbye" } }] },
    { text: "First done." },
    {
      toolCalls: [
        { name: "edit", arguments: { path: "notes.txt", oldText: "world", newText: "moon" } },
        { name: "write", arguments: { path: "new.txt", content: "created\n" } },
        { name: "bash", arguments: { command: "echo hi > bash.txt" } },
      ],
    },
    { text: "Second done." },
  );
}

async function runTwoTurns(terminal: CliTerminal): Promise<string> {
  const header = await terminal.waitFor(/session (\S+) \(new\)/);
  await terminal.waitFor("> ");
  terminal.type("first task\r");
  await terminal.waitFor(/First done\.[^]*\n> $/);
  terminal.type("second task\r");
  await terminal.waitFor(/Second done\.[^]*\n> $/);
  expect([read("notes.txt"), read("new.txt"), read("bash.txt")]).toStrictEqual(["goodbye moon\n", "created\n", "hi\n"]);
  return /session (\S+) \(new\)/.exec(header)![1]!;
}

describe("/rewind", () => {
  it(
    "lists the turns, shows what changes, asks, restores the files and the conversation; the session goes on",
    { timeout: 120_000 },
    async () => {
      scriptTwoTurns();
      const terminal = start();
      const id = await runTwoTurns(terminal);

      terminal.type("/rewind\r");
      await terminal.waitFor("Rewind to before which turn?");
      expect(terminal.screen()).toMatch(/Turns of this session:\n +1 {2}first task\n +2 {2}second task\n/);
      terminal.type("2\r");
      await terminal.waitFor("Rewind? ");
      const plan = terminal.screen().slice(terminal.screen().lastIndexOf("Rewind to before turn 2"));
      expect(plan).toContain("restore  notes.txt");
      expect(plan).toContain("delete   new.txt (the agent created it)");
      expect(plan).toContain(
        "Not restorable: what these bash commands changed stays as it is:\n  $ echo hi > bash.txt",
      );
      // Nothing changed before the answer.
      expect(read("notes.txt")).toBe("goodbye moon\n");
      terminal.type("y");
      await terminal.waitFor(/Rewound: the conversation is back to before turn 2\.[^]*\n> $/);
      expect([read("notes.txt"), exists("new.txt"), read("bash.txt")]).toStrictEqual([
        "goodbye world\n",
        false,
        "hi\n",
      ]);

      // The next task's request holds the first turn only.
      server.enqueue({ text: "Third done." });
      terminal.type("third task\r");
      await terminal.waitFor(/Third done\.[^]*\n> $/);
      const contents = server
        .bodies()
        .at(-1)!
        .messages.map((message) => message.content);
      expect(contents).toContain("first task");
      expect(contents).not.toContain("second task");
      expect(contents.at(-1)).toBe("third task");

      // Back to before the first turn: the file is as it was before the agent touched it.
      terminal.type("/rewind\r");
      // The question of this /rewind, the last line (the first one's has its answer after it).
      await terminal.waitFor(/Rewind to before which turn\? \(1-2; Enter cancels\) $/);
      terminal.type("1\r");
      await terminal.waitFor(/Rewind to before turn 1[^]*Rewind\? [^]*$/);
      terminal.type("y");
      await terminal.waitFor(/Rewound: the conversation is back to before turn 1\.[^]*\n> $/);
      expect(read("notes.txt")).toBe("hello world\n");
      terminal.type("/exit\r");
      expect(await terminal.exited).toBe(0);
      const session = await loadSession(join(home.path, "sessions", `${id}.jsonl`));
      expect(session.messages.filter((message) => "role" in message && message.role === "user")).toStrictEqual([]);
    },
  );

  it("changes nothing when the answer is no", { timeout: 120_000 }, async () => {
    scriptTwoTurns();
    const terminal = start();
    await runTwoTurns(terminal);
    terminal.type("/rewind\r");
    await terminal.waitFor("Rewind to before which turn?");
    terminal.type("1\r");
    await terminal.waitFor("Rewind? ");
    terminal.type("n");
    await terminal.waitFor(/Rewind cancelled; nothing changed\.[^]*\n> $/);
    expect([read("notes.txt"), read("new.txt")]).toStrictEqual(["goodbye moon\n", "created\n"]);
    terminal.type("/exit\r");
    expect(await terminal.exited).toBe(0);
  });
});

describe("--rewind", () => {
  it(
    "asks before overwriting a file someone else changed, in a terminal; without one, --yes keeps it",
    { timeout: 120_000 },
    async () => {
      scriptTwoTurns();
      const first = start();
      await runTwoTurns(first);
      first.type("/exit\r");
      expect(await first.exited).toBe(0);
      // Someone else changes new.txt after the agent created it.
      writeFileSync(join(workspace.path, "new.txt"), "my own text\n");

      // Without a terminal: the turn and --yes; the changed file is kept, the rest restored.
      const scripted = await runCli(["--model", "test-model", "--rewind", "2", "--yes"], {
        cwd: workspace.path,
        env: environment(),
      });
      expect(scripted.code, scripted.stderr).toBe(0);
      expect(scripted.stdout).toContain("Rewound: the conversation is back to before turn 2.");
      expect(scripted.stdout).toContain("kept     new.txt: changed since the agent left it; kept as it is");
      expect([read("notes.txt"), read("new.txt")]).toStrictEqual(["goodbye world\n", "my own text\n"]);

      // In a terminal, the list, then a question for the changed file.
      writeFileSync(join(workspace.path, "notes.txt"), "edited by hand\n");
      const terminal = start(["--rewind"]);
      await terminal.waitFor("Rewind to before which turn?");
      expect(terminal.screen()).toMatch(/Turns of this session:\n +1 {2}first task\n/);
      terminal.type("1\r");
      await terminal.waitFor("Rewind? ");
      expect(terminal.screen()).toContain("changed  notes.txt: someone else changed it since the agent did");
      terminal.type("y");
      await terminal.waitFor("notes.txt was changed since the agent left it. Overwrite it");
      terminal.type("y");
      await terminal.waitFor(/Rewound: the conversation is back to before turn 1\.[^]*\n> $/);
      expect(read("notes.txt")).toBe("hello world\n");
      terminal.type("\x04");
      expect(await terminal.exited).toBe(0);
    },
  );

  it("refuses to run without a terminal unless given the turn and --yes", { timeout: 60_000 }, async () => {
    const run = await runCli(["--model", "test-model", "--rewind"], { cwd: workspace.path, env: environment() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--rewind without a terminal cannot ask");
  });
});
