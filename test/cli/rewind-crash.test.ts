// A rewind killed with SIGKILL between its files, then finished on the next start: every file is
// restored, the conversation cut once, the end recorded, and the session valid and resumable.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { closeSession, loadEntries, loadSession } from "simple-agent-loop/store";
import { planRewind, userTurns } from "../../src/cli/rewind-plan.ts";
import { finishRewind, rewindSession } from "../../src/cli/rewind.ts";
import { startFakeOpenAI } from "./fake-openai.ts";
import { cliEnvironment, runCli } from "./helpers.ts";
import { repositoryRoot, startCliTerminal } from "./terminal.ts";
import { agentWorkspace, call, sessionId, type AgentWorkspace } from "./rewind-fixture.ts";

let agent: AgentWorkspace;

beforeEach(async () => {
  agent = await agentWorkspace();
});

afterEach(async () => {
  await agent.remove();
});

const read = (name: string): string => readFileSync(join(agent.root, name), "utf8");

// The files as before turn 2: a.txt and b.txt put back, c.txt (created in it) gone.
function expectRewound(): void {
  expect([read("a.txt"), read("b.txt"), existsSync(join(agent.root, "c.txt"))]).toStrictEqual([
    "one\n",
    "bee\n",
    false,
  ]);
}

// Runs the child until it stops after its `stop`-th file, then kills it there.
async function rewindKilledAfter(turn: number, stop: number): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      "--conditions=simple-agent-loop-source",
      "test/cli/rewind-crash-child.ts",
      dirname(agent.logPath),
      sessionId,
      agent.root,
      String(turn),
      String(stop),
    ],
    { cwd: repositoryRoot, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.on("exit", (code, signal) => resolve(signal ?? code)),
  );
  const stopped = await new Promise<boolean>((resolve) => {
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('"stopped"')) resolve(true);
    });
    void exited.then(() => resolve(false));
  });
  if (!stopped) throw new Error(`the child exited before its stop:\n${stdout}\n${stderr}`);
  child.kill("SIGKILL");
  expect(await exited).toBe("SIGKILL");
}

// The turns the tests rewind: a.txt edited, b.txt replaced, c.txt created in the second.
async function twoTurns(): Promise<{ before: number; cut: number }> {
  writeFileSync(join(agent.root, "a.txt"), "one\n");
  writeFileSync(join(agent.root, "b.txt"), "bee\n");
  await agent.task("first", call("read", { path: "a.txt" }));
  await agent.task(
    "second",
    call("edit", { path: "a.txt", oldText: "one", newText: "two" }),
    call("write", { path: "b.txt", content: "replaced\n" }),
    call("write", { path: "c.txt", content: "created\n" }),
  );
  const before = agent.session.messages.length;
  const cut = userTurns(agent.session.messages)[1]!.index;
  await closeSession(agent.session);
  return { before, cut };
}

describe("a rewind killed midway", () => {
  for (const stop of [1, 2, 3])
    it(`is finished on the next start (killed after file ${stop} of 3)`, { timeout: 60_000 }, async () => {
      const { before, cut } = await twoTurns();

      await rewindKilledAfter(2, stop);
      const files = [read("a.txt"), read("b.txt"), existsSync(join(agent.root, "c.txt"))];
      // Killed after `stop` files: those are back, the rest not yet; the log holds the intent, no end.
      expect(files).toStrictEqual([stop >= 1 ? "one\n" : "two\n", stop >= 2 ? "bee\n" : "replaced\n", stop < 3]);
      const types = (await loadEntries(agent.logPath)).map((entry) =>
        entry.type === "custom" ? entry.customType : entry.type,
      );
      expect(types.at(-1)).toBe("rewind-start");
      // The session is valid as the crash left it: the conversation is still whole.
      expect((await loadSession(agent.logPath)).messages).toHaveLength(before);

      // The next start finishes it.
      const session = await agent.store.open(sessionId);
      try {
        const report = await finishRewind(session, await loadEntries(agent.logPath), {
          root: agent.root,
          blobs: agent.blobs,
        });
        expect(report).toStrictEqual({
          turn: 2,
          restored: ["a.txt", "b.txt"],
          deleted: ["c.txt"],
          removedDirectories: [],
          skipped: [],
          recovered: true,
        });
        expect(session.messages).toHaveLength(cut);
        expect(
          await finishRewind(session, await loadEntries(agent.logPath), { root: agent.root, blobs: agent.blobs }),
        ).toBe(undefined);
      } finally {
        await closeSession(session);
      }
      expectRewound();
      const reloaded = await loadSession(agent.logPath);
      expect(reloaded.messages).toHaveLength(cut);
      const ends = (await loadEntries(agent.logPath)).filter(
        (entry) => entry.type === "custom" && entry.customType === "rewind-end",
      );
      expect(ends).toHaveLength(1);
    });

  it("is finished by the CLI when the session is resumed, before the task", { timeout: 90_000 }, async () => {
    const { cut } = await twoTurns();
    await rewindKilledAfter(2, 1);
    const server = await startFakeOpenAI();
    try {
      server.enqueue({ text: "Going on." });
      const run = await runCli(["--model", "test-model", "--resume", sessionId, "--yes", "go on"], {
        cwd: agent.root,
        env: cliEnvironment(agent.home, { OPENAI_BASE_URL: server.baseURL }),
      });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(
        /An interrupted rewind was finished: the conversation is back to before turn 2\.\n {2}restored a\.txt\n {2}restored b\.txt\n {2}deleted {2}c\.txt\n/,
      );
      expect(run.stdout.indexOf("An interrupted rewind")).toBeLessThan(run.stdout.indexOf("Going on."));
      // The model was sent the rewound conversation and the new task.
      const contents = server.bodies()[0]!.messages.map((message) => message.content);
      expect(contents).toContain("first");
      expect(contents).not.toContain("second");
      expect(contents.at(-1)).toBe("go on");
    } finally {
      await server.close();
    }
    expectRewound();
    const session = await loadSession(agent.logPath);
    expect(
      session.messages.slice(cut).map((message) => ("role" in message ? message.content : message.type)),
    ).toContain("go on");
  });

  it(
    "is finished by a new start of the CLI in the workspace, without --resume, before its task",
    {
      timeout: 90_000,
    },
    async () => {
      const { cut } = await twoTurns();
      await rewindKilledAfter(2, 2);
      expect(readdirSync(join(agent.home, "rewinds"))).toHaveLength(1);
      const server = await startFakeOpenAI();
      try {
        server.enqueue({ text: "A new session." });
        const run = await runCli(["--model", "test-model", "--yes", "something new"], {
          cwd: agent.root,
          env: cliEnvironment(agent.home, { OPENAI_BASE_URL: server.baseURL }),
        });
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout).toMatch(
          new RegExp(
            `An interrupted rewind of session ${sessionId} was finished: the conversation is back to before turn 2\\.\\n {2}restored a\\.txt\\n {2}restored b\\.txt\\n {2}deleted {2}c\\.txt\\n`,
          ),
        );
        expect(run.stdout.indexOf("An interrupted rewind")).toBeLessThan(run.stdout.indexOf("A new session."));
        // The task went to a new session, which knows nothing of the rewound one.
        expect(
          server
            .bodies()[0]!
            .messages.map((message) => message.content)
            .slice(1),
        ).toStrictEqual(["something new"]);
      } finally {
        await server.close();
      }
      expectRewound();
      expect((await loadSession(agent.logPath)).messages).toHaveLength(cut);
      // The mark is gone: the next start has nothing to finish.
      expect(readdirSync(join(agent.home, "rewinds"))).toStrictEqual([]);
    },
  );

  it("is finished by /resume in the prompt when no mark pointed to it", { timeout: 90_000 }, async () => {
    const { cut } = await twoTurns();
    await rewindKilledAfter(2, 1);
    // As after a start that could not finish it, or a rewind of an older CLI: no mark.
    rmSync(join(agent.home, "rewinds"), { recursive: true, force: true });
    const server = await startFakeOpenAI();
    const terminal = startCliTerminal(["--model", "test-model"], {
      cwd: agent.root,
      env: cliEnvironment(agent.home, { OPENAI_BASE_URL: server.baseURL }),
    });
    try {
      await terminal.waitFor(/\n> $/);
      expect(read("b.txt")).toBe("replaced\n");
      terminal.type(`/resume ${sessionId}\r`);
      await terminal.waitFor(
        /An interrupted rewind was finished: the conversation is back to before turn 2\.\n {2}restored a\.txt\n {2}restored b\.txt\n {2}deleted {2}c\.txt\n[^]*\n> $/,
      );
      expectRewound();
      terminal.type("/exit\r");
      expect(await terminal.exited).toBe(0);
    } finally {
      terminal.kill();
      await server.close();
    }
    expect((await loadSession(agent.logPath)).messages).toHaveLength(cut);
  });

  it("is finished without cutting the conversation twice when the crash came after the cut", async () => {
    const { cut } = await twoTurns();
    const session = await agent.store.open(sessionId);
    const plan = await planRewind(session.messages, userTurns(session.messages)[1]!, agent.root);
    await rewindSession(session, plan, { root: agent.root, blobs: agent.blobs });
    await closeSession(session);
    // As if killed between the splice and the end: the log loses its last line, the end.
    const lines = readFileSync(agent.logPath, "utf8").trimEnd().split("\n");
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ type: "custom", customType: "rewind-end" });
    writeFileSync(agent.logPath, `${lines.slice(0, -1).join("\n")}\n`);
    const reopened = await agent.store.open(sessionId);
    try {
      expect(reopened.messages).toHaveLength(cut);
      const report = await finishRewind(reopened, await loadEntries(agent.logPath), {
        root: agent.root,
        blobs: agent.blobs,
      });
      expect(report).toMatchObject({ restored: ["a.txt", "b.txt"], deleted: ["c.txt"], recovered: true });
      expect(reopened.messages).toHaveLength(cut);
    } finally {
      await closeSession(reopened);
    }
    const types = (await loadEntries(agent.logPath)).map((entry) =>
      entry.type === "custom" ? entry.customType : entry.type,
    );
    expect(types.filter((type) => type === "splice")).toHaveLength(1);
    expect(types.at(-1)).toBe("rewind-end");
    expect((await loadSession(agent.logPath)).messages).toHaveLength(cut);
  });
});
