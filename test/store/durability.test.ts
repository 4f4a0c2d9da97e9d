import * as fs from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  agentLoop,
  extendSession,
  resolveApproval,
  send,
  tool,
  type ModelMessage,
  type Session,
} from "simple-agent-loop";
import { closeSession, loadEntries, loadSession, openSession, type SyncMode } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { tempDir } from "./helpers.ts";

// fsync cannot be observed without pulling the plug, so it is spied on: each fsync of the session
// file is matched to the entry the file ended with at that moment.
vi.mock("node:fs", async (importOriginal) => {
  const actual = await importOriginal<typeof fs>();
  return { ...actual, fsyncSync: vi.fn(actual.fsyncSync), writeSync: vi.fn(actual.writeSync) };
});

const actualFs = await vi.importActual<typeof fs>("node:fs");

afterEach(() => {
  vi.mocked(fs.writeSync).mockReset().mockImplementation(actualFs.writeSync);
  vi.mocked(fs.fsyncSync).mockReset().mockImplementation(actualFs.fsyncSync);
});

/** Runs a session through a turn of parallel tools, compaction, a pause and a decision; returns which entries were fsynced. */
async function syncedEntries(sync: SyncMode | undefined): Promise<{ entry: string; synced: boolean }[]> {
  const path = join(tempDir(), `${sync ?? "default"}.jsonl`);
  const syncedLines: number[] = [];
  vi.mocked(fs.fsyncSync).mockImplementation((fd) => {
    if (fs.fstatSync(fd).ino === fs.statSync(path).ino)
      syncedLines.push(fs.readFileSync(path, "utf8").split("\n").length - 1);
    actualFs.fsyncSync(fd);
  });
  const session = await openSession(path, sync === undefined ? {} : { sync });
  await run(session);
  await closeSession(session);
  const entries = await loadEntries(path);
  return entries.map((entry, index) => ({ entry: label(entry), synced: syncedLines.includes(index + 1) }));
}

const think = (text: string): ModelMessage => ({ type: "thinking", content: `${text} ${"hmm ".repeat(50)}` });

async function run(session: Session): Promise<void> {
  const add = tool({
    name: "add",
    description: "Add.",
    inputSchema: { type: "object" },
    handler: (input) => (input.a as number) + (input.b as number),
  });
  const deploy = tool({
    name: "deploy",
    description: "Deploy.",
    inputSchema: { type: "object" },
    requireApproval: true,
    handler: () => "deployed",
  });
  extendSession(session, { role: "system", content: "s" });
  send(session, "u");
  const model = scriptedModel([
    [
      think("one"),
      { type: "tool_call", id: "a", name: "add", input: { a: 1, b: 2 } },
      { type: "tool_call", id: "b", name: "add", input: { a: 3, b: 4 } },
    ],
    [think("two"), { type: "tool_call", id: "d", name: "deploy", input: {} }],
    [think("three"), { role: "assistant", content: "done" }],
  ]);
  await agentLoop(model, [add, deploy], session, { compaction: { keepTurns: 1, batch: 1 } });
  resolveApproval(session, "d", { approved: true });
  await agentLoop(model, [add, deploy], session, { compaction: { keepTurns: 1, batch: 1 } });
}

function label(entry: { type: string; message?: unknown; index?: unknown }): string {
  if (entry.type !== "message") return `${entry.type} ${String(entry.index)}`;
  const message = entry.message as { role?: string; type?: string; id?: string };
  return message.role ?? `${message.type}${message.id === undefined ? "" : ` ${message.id}`}`;
}
describe("durability", () => {
  it("fsyncs at turn boundaries by default: where no tool call waits for its result, on approval updates", async () => {
    expect(await syncedEntries(undefined)).toStrictEqual([
      { entry: "system", synced: true },
      { entry: "user", synced: true },
      { entry: "thinking", synced: false },
      { entry: "tool_call a", synced: false },
      { entry: "tool_call b", synced: false },
      { entry: "tool_result a", synced: false }, // b still runs
      { entry: "tool_result b", synced: true }, // the turn's calls are all answered
      { entry: "thinking", synced: false },
      { entry: "tool_call d", synced: false },
      { entry: "update 8", synced: true }, // paused
      { entry: "update 8", synced: true }, // approved
      { entry: "tool_result d", synced: true },
      { entry: "replace 2", synced: false }, // compaction: redone by the next run if lost
      { entry: "thinking", synced: false },
      { entry: "assistant", synced: true }, // the final answer
    ]);
  });

  it('fsyncs after every write with sync: "every-entry" (a model turn is one write), never with sync: "off"', async () => {
    // Only the messages of a model turn before its last are not followed by their own fsync.
    expect(
      (await syncedEntries("every-entry")).filter(({ synced }) => !synced).map(({ entry }) => entry),
    ).toStrictEqual(["thinking", "tool_call a", "thinking", "thinking"]);
    expect((await syncedEntries("off")).some(({ synced }) => synced)).toBe(false);
  });

  it("fsyncs on close what is not synced yet", async () => {
    const path = join(tempDir(), "close.jsonl");
    const session = await openSession(path);
    extendSession(session, { type: "tool_call", id: "x", name: "n", input: {} });
    const calls = (): number => vi.mocked(fs.fsyncSync).mock.calls.length;
    const before = calls();
    await closeSession(session);
    expect(calls()).toBe(before + 1);
  });

  it("a user message ends the turn before it: calls that turn left unanswered (a crash) keep no later turn from its fsync", async () => {
    const fsyncs = (): number => vi.mocked(fs.fsyncSync).mock.calls.length;
    const path = join(tempDir(), "abandoned.jsonl");
    const crashed = await openSession(path);
    send(crashed, "u");
    extendSession(crashed, { type: "tool_call", id: "lost", name: "n", input: {} });
    let before = fsyncs();
    send(crashed, "something else");
    expect(fsyncs()).toBe(before + 1);
    await closeSession(crashed);

    const path2 = join(tempDir(), "abandoned-reopened.jsonl");
    const first = await openSession(path2);
    send(first, "u");
    extendSession(first, { type: "tool_call", id: "lost", name: "n", input: {} });
    await closeSession(first);
    const reopened = await openSession(path2);
    before = fsyncs();
    send(reopened, "something else");
    expect(fsyncs()).toBe(before + 1);
    await closeSession(reopened);
  });

  it("a failed write stops the recording: that change and every later one throw; the file keeps what was written", async () => {
    const path = join(tempDir(), "full-disk.jsonl");
    const session = await openSession(path);
    send(session, "first");
    vi.mocked(fs.writeSync).mockImplementationOnce(() => {
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    });
    expect(() => send(session, "second")).toThrow(
      expect.objectContaining({
        name: "StoreError",
        code: "write-failed",
        message: `${path}: could not append to the session log: ENOSPC: no space left on device, write`,
      }),
    );
    expect(() => send(session, "third")).toThrow(
      expect.objectContaining({
        code: "write-failed",
        message: `${path}: an earlier write failed, so this session is no longer recorded`,
      }),
    );
    // Closing says so again (the session holds messages the file does not), and still releases the file.
    await expect(closeSession(session)).rejects.toMatchObject({ code: "write-failed" });
    expect(
      (await loadSession(path)).messages.map((message) => ("role" in message ? message.content : "")),
    ).toStrictEqual(["first"]);
    // The lock was released: the file can be opened again.
    await closeSession(await openSession(path));
  });
});
