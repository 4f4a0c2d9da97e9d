import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentLoop, extendSession, forkSession, initSession, send } from "simple-agent-loop";
import {
  appendEntry,
  bindSession,
  closeSession,
  loadEntries,
  loadSession,
  openSession,
  type SessionEntry,
} from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { tempDir } from "./helpers.ts";

describe("a session bound to its file", () => {
  it("a model turn reaches a sink in one appendAll; without appendAll, entry by entry", async () => {
    const turn = () =>
      scriptedModel([
        [
          { type: "thinking", content: "plan" },
          { role: "assistant", content: "answer" },
        ],
      ]);
    const writes: SessionEntry[][] = [];
    const batched = initSession("s", "u");
    bindSession(batched, {
      append: (entry) => writes.push([entry]),
      appendAll: (entries) => writes.push(entries),
      close: () => {},
    });
    await agentLoop(turn(), [], batched);
    await closeSession(batched);
    expect(
      writes.map((entries) =>
        entries.map((entry) => (entry.type === "message" && "type" in entry.message ? entry.message.type : entry.type)),
      ),
    ).toStrictEqual([["thinking", "message"]]);

    const single: SessionEntry[] = [];
    const plain = initSession("s", "u");
    bindSession(plain, { append: (entry) => single.push(entry), close: () => {} });
    await agentLoop(turn(), [], plain);
    await closeSession(plain);
    expect(single.map((entry) => (entry.type === "message" ? entry.message : undefined))).toStrictEqual(
      plain.messages.slice(2),
    );
  });

  it("appendEntry records an entry of the application's own, after the messages so far; the session is unchanged", async () => {
    const path = join(tempDir(), "custom.jsonl");
    const session = await openSession(path);
    send(session, "hi");
    appendEntry(session, "checkpoint", { step: 3, label: "before deploy" });
    appendEntry(session, "marker");
    send(session, "bye");
    await closeSession(session);
    expect(await loadEntries(path)).toStrictEqual([
      { type: "message", message: { role: "user", content: "hi", ts: expect.any(String) } },
      { type: "custom", customType: "checkpoint", ts: expect.any(String), data: { step: 3, label: "before deploy" } },
      { type: "custom", customType: "marker", ts: expect.any(String) },
      { type: "message", message: { role: "user", content: "bye", ts: expect.any(String) } },
    ]);
    expect(await loadSession(path)).toStrictEqual(session);
    expect(() => appendEntry(session, "late")).toThrow(
      expect.objectContaining({ name: "StoreError", code: "not-open" }),
    );
    expect(() => appendEntry({ messages: [] }, "x")).toThrow(
      "appendEntry: the session is not open in a store (openSession)",
    );
  });

  it("stops recording once closed; a fork is never recorded", async () => {
    const path = join(tempDir(), "closed.jsonl");
    const session = await openSession(path);
    send(session, "recorded");
    const fork = forkSession(session);
    send(fork, "only in the fork");
    await closeSession(session);
    send(session, "after close");
    expect(
      (await loadSession(path)).messages.map((message) => ("role" in message ? message.content : "")),
    ).toStrictEqual(["recorded"]);
  });

  it("records messages pushed onto session.messages directly at the next change, or at close", async () => {
    const path = join(tempDir(), "pushed.jsonl");
    const session = await openSession(path);
    session.messages.push({ role: "system", content: "pushed", ts: "2025-01-01T00:00:00.000Z" });
    send(session, "sent");
    session.messages.push({ role: "user", content: "pushed at the end", ts: "2025-01-01T00:00:01.000Z" });
    await closeSession(session);
    expect(await loadSession(path)).toStrictEqual(session);
    expect(session.messages).toHaveLength(3);
  });

  it("refuses a change after messages were removed: an append-only log cannot record it", async () => {
    const path = join(tempDir(), "shrunk.jsonl");
    const session = await openSession(path);
    send(session, "one");
    send(session, "two");
    session.messages.pop();
    session.messages.pop();
    expect(() => extendSession(session, { role: "user", content: "three" })).toThrow(
      expect.objectContaining({
        name: "StoreError",
        code: "modified",
        message: expect.stringMatching(/only grow; fork it \(forkSession\) to branch$/),
      }),
    );
    await expect(closeSession(session)).rejects.toMatchObject({ code: "modified" });
    expect(readFileSync(path, "utf8").split("\n").filter(Boolean)).toHaveLength(2);
  });

  it("refuses a replaced last message too (one removed, one added: same length, not the same session)", async () => {
    const path = join(tempDir(), "replaced.jsonl");
    const session = await openSession(path);
    send(session, "one");
    send(session, "two");
    session.messages.pop();
    expect(() => send(session, "other two")).toThrow(
      expect.objectContaining({
        code: "modified",
        message: expect.stringMatching(/^the session lost messages \(2 recorded, 1 left\)/),
      }),
    );
    expect(
      (await loadSession(path)).messages.map((message) => ("role" in message ? message.content : "")),
    ).toStrictEqual(["one", "two"]);
    await closeSession(session);
  });
});
