// Checkpoints and rewind: what write and edit record, the plan a rewind shows, and what it restores.
import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadEntries, loadSession } from "simple-agent-loop/store";
import { agentLoop, send, type ModelMessage } from "simple-agent-loop";
import { appendEntry } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import {
  checkpointOf,
  checkpointRecorder,
  pendingCheckpointEntry,
  pendingCheckpoints,
} from "../../src/cli/checkpoints.ts";
import { codingTools, createWorkspace } from "../../src/cli/tools/index.ts";
import { planRewind, userTurns } from "../../src/cli/rewind-plan.ts";
import { rewindSession } from "../../src/cli/rewind.ts";
import { blobDirectory, blobHash } from "../../src/store/blobs.ts";
import { tempDirectory } from "./helpers.ts";
import { agentWorkspace, call, type AgentWorkspace } from "./rewind-fixture.ts";

let agent: AgentWorkspace;

beforeEach(async () => {
  agent = await agentWorkspace();
});

afterEach(async () => {
  await agent.remove();
});

const file = (name: string): string => join(agent.root, name);
const read = (name: string): string => readFileSync(file(name), "utf8");

// Turn 1 edits a.txt; turn 2 edits it again, creates c.txt and runs a command that writes d.txt.
async function twoTurns(): Promise<void> {
  writeFileSync(file("a.txt"), "one\n");
  await agent.task(
    "make it two",
    call("read", { path: "a.txt" }),
    call("edit", { path: "a.txt", oldText: "one", newText: "two" }),
  );
  await agent.task(
    "make it three, add c, run the command",
    call("edit", { path: "a.txt", oldText: "two", newText: "three" }),
    call("write", { path: "sub/c.txt", content: "created\n" }),
    call("bash", { command: "echo made by bash > d.txt" }),
  );
  expect(read("a.txt")).toBe("three\n");
  expect(read("sub/c.txt")).toBe("created\n");
}

describe("write and edit keep checkpoints", () => {
  it("records the previous content as a blob of the session, a new file as absent, and the hash left", async () => {
    writeFileSync(file("a.txt"), "the original content of a\n");
    await agent.task(
      "change a, create b",
      call("read", { path: "a.txt" }),
      call("edit", { path: "a.txt", oldText: "original", newText: "edited" }),
      call("write", { path: "b.txt", content: "new file\n" }),
      call("write", { path: "a.txt", content: "rewritten\n" }),
    );
    const checkpoints = agent.session.messages.map(checkpointOf).filter((checkpoint) => checkpoint !== undefined);
    const sha = (text: string): string => blobHash(Buffer.from(text));
    const mode = statSync(file("a.txt")).mode & 0o777;
    expect(checkpoints).toStrictEqual([
      {
        path: "a.txt",
        before: { type: "blob", blob: sha("the original content of a\n"), mode },
        after: sha("the edited content of a\n"),
      },
      { path: "b.txt", before: { type: "absent" }, after: sha("new file\n") },
      {
        path: "a.txt",
        before: { type: "blob", blob: sha("the edited content of a\n"), mode },
        after: sha("rewritten\n"),
      },
    ]);
    // The results' lines refer to the blobs; the content itself is in them (only read's output shows it).
    const lines = readFileSync(agent.logPath, "utf8").split("\n");
    const recorded = lines.filter((line) => line.includes('"checkpoint"'));
    expect(recorded).toHaveLength(3);
    for (const line of recorded) expect(line).not.toMatch(/original content|edited content/);
    expect(readFileSync(join(blobDirectory(agent.logPath), sha("the original content of a\n")), "utf8")).toBe(
      "the original content of a\n",
    );
    // The session stays loadable as it is, checkpoints included, and the model never sees them.
    const loaded = await loadSession(agent.logPath);
    expect(loaded.messages.map(checkpointOf).filter((checkpoint) => checkpoint !== undefined)).toStrictEqual(
      checkpoints,
    );
  });

  it("keeps no checkpoint for a call that failed before changing anything", async () => {
    writeFileSync(file("a.txt"), "one\n");
    await agent.task("edit unread", call("edit", { path: "a.txt", oldText: "one", newText: "two" }));
    expect(agent.session.messages.map(checkpointOf).filter((checkpoint) => checkpoint !== undefined)).toStrictEqual([]);
  });
});

describe("planning a rewind", () => {
  it("lists the user turns, the files to restore or delete, and the commands whose changes stay", async () => {
    await twoTurns();
    const turns = userTurns(agent.session.messages);
    expect(turns.map((turn) => turn.text)).toStrictEqual(["make it two", "make it three, add c, run the command"]);
    const plan = await planRewind(agent.session.messages, turns[1]!, agent.root);
    expect(plan.files.map(({ path, target, status }) => ({ path, target: target.type, status }))).toStrictEqual([
      { path: "a.txt", target: "blob", status: "restore" },
      { path: "sub/c.txt", target: "absent", status: "restore" },
    ]);
    expect(plan.directories).toStrictEqual(["sub"]);
    expect(plan.commands).toStrictEqual(["echo made by bash > d.txt"]);
    expect(plan.notRestorable).toStrictEqual([]);
    expect(plan.removedMessages).toBe(agent.session.messages.length - turns[1]!.index);
  });

  it("marks a file someone else changed since the agent left it", async () => {
    await twoTurns();
    writeFileSync(file("a.txt"), "my own change\n");
    const plan = await planRewind(agent.session.messages, userTurns(agent.session.messages)[1]!, agent.root);
    expect(plan.files.find((planned) => planned.path === "a.txt")?.status).toBe("changed");
  });
});

describe("rewinding", () => {
  it("restores edited files, deletes created ones, leaves what bash made, and cuts the conversation", async () => {
    await twoTurns();
    const turns = userTurns(agent.session.messages);
    const plan = await planRewind(agent.session.messages, turns[1]!, agent.root);
    const report = await rewindSession(agent.session, plan, { root: agent.root, blobs: agent.blobs });
    expect(report).toStrictEqual({
      turn: 2,
      restored: ["a.txt"],
      deleted: ["sub/c.txt"],
      removedDirectories: ["sub"],
      skipped: [],
    });
    expect(read("a.txt")).toBe("two\n");
    // The directory the agent's write created went with the file, as it was empty then.
    expect(existsSync(file("sub"))).toBe(false);
    expect(read("d.txt")).toBe("made by bash\n");
    expect(agent.session.messages).toHaveLength(turns[1]!.index);
    expect(agent.session.messages.at(-1)).toMatchObject({ role: "assistant", content: "done: make it two" });
    // The log replays to the same session; the intent and the end are recorded around the splice.
    expect((await loadSession(agent.logPath)).messages).toStrictEqual(agent.session.messages);
    const entries = await loadEntries(agent.logPath);
    expect(entries.slice(-3).map((entry) => (entry.type === "custom" ? entry.customType : entry.type))).toStrictEqual([
      "rewind-start",
      "splice",
      "rewind-end",
    ]);

    // The session goes on, and a later rewind to the first turn undoes the first edit too.
    await agent.task("again", call("write", { path: "a.txt", content: "four\n" }));
    const first = userTurns(agent.session.messages)[0]!;
    const back = await planRewind(agent.session.messages, first, agent.root);
    await rewindSession(agent.session, back, { root: agent.root, blobs: agent.blobs });
    expect(read("a.txt")).toBe("one\n");
    expect(userTurns(agent.session.messages)).toStrictEqual([]);
    expect((await loadSession(agent.logPath)).messages).toStrictEqual(agent.session.messages);
  });

  it("removes the directories the agent created once empty, never one it found or one holding something else", async () => {
    const { mkdirSync } = await import("node:fs");
    mkdirSync(file("found"));
    await agent.task("keep this", call("write", { path: "keep.txt", content: "kept\n" }));
    await agent.task(
      "make a tree",
      call("write", { path: "found/new/deep/a.txt", content: "a\n" }),
      call("write", { path: "found/new/b.txt", content: "b\n" }),
      call("write", { path: "other/c.txt", content: "c\n" }),
      call("write", { path: "empty/d.txt", content: "d\n" }),
    );
    // Someone else puts a file of their own in one of them.
    writeFileSync(file("other/mine.txt"), "mine\n");
    const checkpoints = agent.session.messages.map(checkpointOf).filter((checkpoint) => checkpoint !== undefined);
    expect(checkpoints.map((checkpoint) => checkpoint.directories)).toStrictEqual([
      undefined,
      ["found/new", "found/new/deep"],
      undefined,
      ["other"],
      ["empty"],
    ]);
    const plan = await planRewind(agent.session.messages, userTurns(agent.session.messages)[1]!, agent.root);
    expect(plan.directories).toStrictEqual(["found/new/deep", "found/new", "other", "empty"]);
    const report = await rewindSession(agent.session, plan, { root: agent.root, blobs: agent.blobs });
    expect(report.deleted).toStrictEqual(["found/new/deep/a.txt", "found/new/b.txt", "other/c.txt", "empty/d.txt"]);
    expect(report.removedDirectories).toStrictEqual(["found/new/deep", "found/new", "empty"]);
    expect(readdirSync(agent.root).sort()).toStrictEqual(["found", "keep.txt", "other"]);
    expect(readdirSync(file("found"))).toStrictEqual([]);
    expect(readdirSync(file("other"))).toStrictEqual(["mine.txt"]);
  });

  it("makes a file deleted since the agent changed it again, with the permission bits it had", async () => {
    writeFileSync(file("run.sh"), "echo one\n");
    chmodSync(file("run.sh"), 0o750);
    await agent.task("first", call("read", { path: "run.sh" }));
    await agent.task("change it", call("write", { path: "run.sh", content: "echo two\n" }));
    rmSync(file("run.sh"));
    const plan = await planRewind(agent.session.messages, userTurns(agent.session.messages)[1]!, agent.root);
    // Gone is not what the agent left: someone else changed it, so it is put back only when told.
    expect(plan.files.map(({ path, status }) => ({ path, status }))).toStrictEqual([
      { path: "run.sh", status: "changed" },
    ]);
    await rewindSession(agent.session, plan, { root: agent.root, blobs: agent.blobs, overwrite: new Set(["run.sh"]) });
    expect(read("run.sh")).toBe("echo one\n");
    expect(statSync(file("run.sh")).mode & 0o777).toBe(0o750);
  });

  it("restores a change whose result lost its checkpoint (a crash after the change) from the one logged before it", async () => {
    // Checkpoints logged before each change, as the CLI logs them; the results never get theirs.
    const recorder = checkpointRecorder(agent.blobs, {
      pending: (callId, checkpoint) => appendEntry(agent.session, pendingCheckpointEntry, { callId, checkpoint }),
    });
    const tools = codingTools(agent.root, {
      workspace: createWorkspace(agent.root, { onFileChange: recorder.onFileChange }),
    });
    const run = async (text: string, ...turns: ModelMessage[][]): Promise<void> => {
      send(agent.session, text);
      await agentLoop(scriptedModel([...turns, [{ role: "assistant", content: "done" }]]), tools, agent.session);
    };
    writeFileSync(file("a.txt"), "one\n");
    await run("look", call("read", { path: "a.txt" }));
    await run(
      "change",
      call("edit", { path: "a.txt", oldText: "one", newText: "two" }),
      call("write", { path: "made/new.txt", content: "new\n" }),
    );
    const turn = userTurns(agent.session.messages)[1]!;
    // Without the log's entries, nothing is known of those changes.
    const blind = await planRewind(agent.session.messages, turn, agent.root);
    expect(blind.files).toStrictEqual([]);
    expect(blind.notRestorable.map((entry) => entry.path)).toStrictEqual(["a.txt", "made/new.txt"]);
    const pending = pendingCheckpoints(await loadEntries(agent.logPath));
    expect(pending.size).toBe(2);
    const plan = await planRewind(agent.session.messages, turn, agent.root, pending);
    expect(plan.files.map(({ path, status }) => ({ path, status }))).toStrictEqual([
      { path: "a.txt", status: "restore" },
      { path: "made/new.txt", status: "restore" },
    ]);
    expect(plan.notRestorable).toStrictEqual([]);
    const report = await rewindSession(agent.session, plan, { root: agent.root, blobs: agent.blobs });
    expect(report).toMatchObject({ restored: ["a.txt"], deleted: ["made/new.txt"], removedDirectories: ["made"] });
    expect(read("a.txt")).toBe("one\n");
    expect(existsSync(file("made"))).toBe(false);
  });

  it("does not overwrite a file someone else changed unless told to", async () => {
    await twoTurns();
    writeFileSync(file("a.txt"), "my own change\n");
    const turn = userTurns(agent.session.messages)[1]!;
    const plan = await planRewind(agent.session.messages, turn, agent.root);
    const report = await rewindSession(agent.session, plan, { root: agent.root, blobs: agent.blobs });
    expect(report.skipped).toStrictEqual([{ path: "a.txt", reason: "changed since the agent left it; kept as it is" }]);
    expect(read("a.txt")).toBe("my own change\n");
    expect(existsSync(file("sub/c.txt"))).toBe(false);
  });

  it("overwrites a file someone else changed when the user says so", async () => {
    await twoTurns();
    writeFileSync(file("a.txt"), "my own change\n");
    const plan = await planRewind(agent.session.messages, userTurns(agent.session.messages)[1]!, agent.root);
    const report = await rewindSession(agent.session, plan, {
      root: agent.root,
      blobs: agent.blobs,
      overwrite: new Set(["a.txt"]),
    });
    expect(report.restored).toStrictEqual(["a.txt"]);
    expect(read("a.txt")).toBe("two\n");
  });

  it("never follows a symbolic link put in a restored file's place, out of the workspace", async () => {
    const outside = tempDirectory("rewind-outside-");
    try {
      writeFileSync(join(outside.path, "secret.txt"), "outside\n");
      await agent.task("create a", call("write", { path: "a.txt", content: "agent\n" }));
      await agent.task("change a", call("write", { path: "a.txt", content: "agent again\n" }));
      // Someone swaps the file for a link leading out of the workspace.
      const { rmSync } = await import("node:fs");
      rmSync(file("a.txt"));
      symlinkSync(join(outside.path, "secret.txt"), file("a.txt"));
      const plan = await planRewind(agent.session.messages, userTurns(agent.session.messages)[1]!, agent.root);
      expect(plan.files[0]?.status).toBe("unreadable");
      const report = await rewindSession(agent.session, plan, {
        root: agent.root,
        blobs: agent.blobs,
        overwrite: new Set(["a.txt"]),
      });
      expect(report.skipped.map((skipped) => skipped.path)).toStrictEqual(["a.txt"]);
      expect(readFileSync(join(outside.path, "secret.txt"), "utf8")).toBe("outside\n");
      expect(readdirSync(outside.path)).toStrictEqual(["secret.txt"]);
    } finally {
      outside.remove();
    }
  });
});
