// The file store's status filter reads each log's end only: its answer must be the one the whole
// log gives (summaryTracker), whatever the last turn looks like and however long it is.
import { appendFileSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentLoop, extendSession, resolveApproval, tool, type Session } from "simple-agent-loop";
import { closeSession, fileStore, loadEntries, type FileStore } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { restingStatusFromTail, tailBytes } from "../../src/store/resting-status.ts";
import { summaryTracker } from "../../src/store/session-summary.ts";
import { tempDir } from "./helpers.ts";

const write = tool({
  name: "write",
  description: "writes",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
  requireApproval: true,
  handler: ({ text }) => `wrote ${String(text).length}`,
});
const read = tool({
  name: "read",
  description: "reads",
  inputSchema: { type: "object", properties: { page: { type: "number" } } },
  handler: ({ page }) => `page ${String(page)}`,
});

async function wholeLogStatus(store: FileStore, id: string): Promise<string> {
  const tracker = summaryTracker();
  for (const entry of await loadEntries(store.path(id), { onWarning: () => undefined })) tracker.add(entry);
  return tracker.resting();
}

async function expectSameAnswer(store: FileStore, id: string, expected: string): Promise<void> {
  expect(await wholeLogStatus(store, id)).toBe(expected);
  expect(await restingStatusFromTail(store.path(id))).toBe(expected);
  const listed = await store.list({ status: expected as "paused" | "done" | "error" });
  expect(listed.map((summary) => summary.id)).toContain(id);
  for (const other of ["paused", "done", "error"] as const)
    if (other !== expected)
      expect((await store.list({ status: other })).map((summary) => summary.id)).not.toContain(id);
}

async function runOnce(store: FileStore, id: string, turns: Parameters<typeof scriptedModel>[0], task?: string) {
  const session = await store.open(id);
  if (task !== undefined) {
    extendSession(session, { role: "system", content: "You help." });
    extendSession(session, { role: "user", content: task });
  }
  try {
    return await agentLoop(scriptedModel(turns), [write, read], session, { maxIterations: 100 });
  } finally {
    await closeSession(session);
  }
}

async function decide(store: FileStore, id: string, approved: boolean): Promise<void> {
  const session: Session = await store.open(id);
  for (const message of session.messages)
    if ("type" in message && message.type === "tool_call" && message.approval?.status === "pending")
      resolveApproval(session, message.id, approved ? { approved } : { approved, reason: "no" });
  await closeSession(session);
}

describe("the file store's status from a log's end", () => {
  it("a short session: paused while a call waits, done once decided and answered, error after a failed call", async () => {
    const store = fileStore(tempDir());
    await runOnce(store, "a", [[{ type: "tool_call", id: "w1", name: "write", input: { text: "hi" } }]], "write hi");
    await expectSameAnswer(store, "a", "paused");
    await decide(store, "a", true);
    // Decided but not run yet: nothing waits for a human any more.
    await expectSameAnswer(store, "a", "done");
    await runOnce(store, "a", [[{ role: "assistant", content: "Done." }]]);
    await expectSameAnswer(store, "a", "done");
    // A provider's failure recorded as the turn's last message.
    await runOnce(store, "a", [[{ role: "assistant", content: "", stopReason: "error" }]]);
    await expectSameAnswer(store, "a", "error");
  });

  it("a last turn longer than the first window (many calls, big inputs), one of them waiting", async () => {
    const store = fileStore(tempDir());
    const calls = Array.from({ length: 40 }, (_, index) => ({
      type: "tool_call" as const,
      id: `r${index}`,
      name: "read",
      input: { page: index },
    }));
    const big = { type: "tool_call" as const, id: "w", name: "write", input: { text: "y".repeat(2 * tailBytes) } };
    await runOnce(store, "long", [[big, ...calls]], "write a lot");
    expect(statSync(store.path("long")).size).toBeGreaterThan(4 * tailBytes);
    await expectSameAnswer(store, "long", "paused");
    await decide(store, "long", false);
    await expectSameAnswer(store, "long", "done");
  });

  it("many turns before the last (a log far over the window), ending paused or done", async () => {
    const store = fileStore(tempDir());
    const turns = Array.from({ length: 60 }, (_, index) => [
      { role: "assistant" as const, content: `reading ${index} ${"z".repeat(3000)}` },
      { type: "tool_call" as const, id: `t${index}`, name: "read", input: { page: index } },
    ]);
    await runOnce(
      store,
      "many",
      [...turns, [{ type: "tool_call", id: "w", name: "write", input: { text: "end" } }]],
      "read a lot",
    );
    expect(statSync(store.path("many")).size).toBeGreaterThan(2 * tailBytes);
    await expectSameAnswer(store, "many", "paused");
    await decide(store, "many", true);
    await runOnce(store, "many", [[{ role: "assistant", content: "Written." }]]);
    await expectSameAnswer(store, "many", "done");
  });

  it("a torn last line is left out, as loading leaves it out; a line that is not JSON leaves the answer to the whole log", async () => {
    const directory = tempDir();
    const store = fileStore(directory);
    await runOnce(store, "torn", [[{ type: "tool_call", id: "w1", name: "write", input: { text: "hi" } }]], "t");
    appendFileSync(store.path("torn"), '{"type":"message","message":{"role":"assist');
    expect(await restingStatusFromTail(store.path("torn"))).toBe("paused");
    expect((await store.list({ status: "paused" })).map((summary) => summary.id)).toStrictEqual(["torn"]);
    const file = join(directory, "broken.jsonl");
    appendFileSync(file, `${readFileSync(store.path("torn"), "utf8").split("\n")[0]!}\nnot json\n`);
    expect(await restingStatusFromTail(file)).toBeUndefined();
  });
});
