// The behaviour every SessionStore must have, as one vitest suite: run it against your own
// backend (`sessionStoreSuite("mine", () => myStore())`) as this package runs it against the file,
// SQLite and PostgreSQL stores. Needs vitest (an optional peer dependency).
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  extendSession,
  extendSessionBatch,
  initSession,
  notifySessionChange,
  send,
  sessionIdOf,
  spliceSession,
  type Message,
  type Session,
  type ToolCallMessage,
  type ToolResultMessage,
} from "../session.ts";
import { appendEntry, closeSession, flushSession } from "./binding.ts";
import type { SessionStore } from "./session-store.ts";

export type SessionStoreSuiteOptions = {
  /**
   * Makes the writer that holds `id` look gone to the store, as a writer killed mid-run leaves
   * it (a database store: its lease expired). Without it, the take-over and fencing cases are
   * skipped, saying so.
   */
  expireLease?: (store: SessionStore, id: string) => Promise<void>;
  /** Called after each case with the store it made (close a pool, say). */
  dispose?: (store: SessionStore) => void | Promise<void>;
};

/** Registers the shared cases under `SessionStore: <name>`; `createStore` must return a new, empty store each call. */
export function sessionStoreSuite(
  name: string,
  createStore: () => SessionStore | Promise<SessionStore>,
  options: SessionStoreSuiteOptions = {},
): void {
  const withStore: WithStore = (test) => async () => {
    const store = await createStore();
    try {
      await test(store);
    } finally {
      await options.dispose?.(store);
    }
  };
  const { expireLease } = options;

  describe(`SessionStore: ${name}`, () => {
    recordingCases(withStore);
    writerCases(withStore, expireLease);
    historyCases(withStore);
    entryCases(withStore);
    listCases(withStore);
    filterCases(withStore);
    stopCases(withStore);
    encodingCases(withStore);
    recordEncodingCases(withStore);
    blobCases(withStore);
  });
}

type WithStore = (test: (store: SessionStore) => Promise<void>) => () => Promise<void>;

function recordingCases(withStore: WithStore): void {
  it(
    "opens a new id as an empty session and records every change of a run; load reads it back exactly",
    withStore(async (store) => {
      const session = await store.open("run-1");
      expect(session).toStrictEqual({ messages: [] });
      // The loop tells models which stored session they work on (ModelContext.sessionId).
      expect(sessionIdOf(session)).toBe("run-1");
      for (const message of initSession("s", "add 2 and 3").messages) extendSession(session, message);
      extendSessionBatch(session, [
        { type: "thinking", content: "adding" },
        { type: "tool_call", id: "1", name: "add", input: { a: 2, b: 3 }, stopReason: "tool_use" },
      ]);
      extendSession(session, { type: "tool_result", id: "1", output: 5 });
      extendSession(session, { role: "assistant", content: "5", stopReason: "end_turn" });
      await flushSession(session);
      expect(await store.load("run-1")).toStrictEqual(session);
      await closeSession(session);
      expect(await store.load("run-1")).toStrictEqual(session);
      expect((await store.loadEntries("run-1")).map((entry) => entry.type)).toStrictEqual(
        Array.from({ length: 6 }, () => "message"),
      );
    }),
  );

  it(
    "reopens a stored session where it was, and records what follows",
    withStore(async (store) => {
      const first = await store.open("resume");
      send(first, "one");
      await closeSession(first);
      const again = await store.open("resume");
      expect(again).toStrictEqual(first);
      send(again, "two");
      await closeSession(again);
      expect(texts(await store.load("resume"))).toStrictEqual(["one", "two"]);
    }),
  );

  it(
    "records a model turn all or nothing: a turn that cannot be stored leaves none of it",
    withStore(async (store) => {
      const session = await store.open("whole-turn");
      send(session, "go");
      const unstorable = { n: 1n } as unknown as ToolCallMessage["input"];
      expect(() =>
        extendSessionBatch(session, [
          { type: "thinking", content: "first half" },
          { type: "tool_call", id: "1", name: "t", input: unstorable },
        ]),
      ).toThrow();
      // What the caller does with a turn that failed: drop it (closing records what is left).
      session.messages.splice(1);
      await closeSession(session);
      expect(texts(await store.load("whole-turn"))).toStrictEqual(["go"]);
    }),
  );
}

function writerCases(withStore: WithStore, expireLease: SessionStoreSuiteOptions["expireLease"]): void {
  it(
    "has one writer per id at a time: a second open is a SessionLockedError until the first closes",
    withStore(async (store) => {
      const session = await store.open("busy");
      await expect(store.open("busy")).rejects.toMatchObject({ name: "SessionLockedError", code: "locked" });
      const other = await store.open("other");
      await closeSession(other);
      // Reading is always allowed.
      await expect(store.load("busy")).resolves.toStrictEqual(session);
      await closeSession(session);
      await closeSession(await store.open("busy"));
    }),
  );

  it.skipIf(expireLease === undefined)(
    "takes a session over once its writer's lease expired, and refuses the old writer's writes (fenced)",
    withStore(async (store) => {
      const stale = await store.open("taken");
      send(stale, "before");
      await flushSession(stale);
      await expireLease!(store, "taken");
      const taker = await store.open("taken");
      expect(texts(taker)).toStrictEqual(["before"]);
      send(taker, "new writer");
      await flushSession(taker);
      const refused = (async () => {
        send(stale, "old writer, too late");
        await flushSession(stale);
      })();
      await expect(refused).rejects.toMatchObject({ name: "SessionLockedError", code: "locked" });
      await closeSession(stale).catch(() => undefined);
      send(taker, "still recorded");
      await closeSession(taker);
      expect(texts(await store.load("taken"))).toStrictEqual(["before", "new writer", "still recorded"]);
    }),
  );
}

function historyCases(withStore: WithStore): void {
  it(
    "records compaction's splices and replacements, and loads the compacted session",
    withStore(async (store) => {
      const session = await store.open("compacted");
      for (const text of ["one", "two", "three", "four"]) {
        send(session, text);
        extendSession(session, { role: "assistant", content: `re ${text}` });
      }
      spliceSession(session, 0, 4, [{ role: "user", content: "summary of one and two" }], { tokensBefore: 40 });
      const previous = session.messages[1]!;
      const shortened: Message = { role: "assistant", content: "re thr…" };
      session.messages[2] = shortened;
      notifySessionChange(session, { type: "replace", index: 2, message: shortened, previous, reason: "compaction" });
      send(session, "five");
      await closeSession(session);
      const loaded = await store.load("compacted");
      expect(loaded).toStrictEqual(session);
      expect(texts(loaded)).toStrictEqual(["summary of one and two", "three", "re thr…", "four", "re four", "five"]);
      expect((await store.loadEntries("compacted")).map((entry) => entry.type)).toStrictEqual([
        ...Array.from({ length: 8 }, () => "message"),
        "splice",
        "replace",
        "message",
      ]);
    }),
  );

  it(
    "records approval marks and decisions; a paused session is listed as paused until it is answered",
    withStore(async (store) => {
      const session = await store.open("approval");
      send(session, "delete the logs");
      extendSession(session, { type: "tool_call", id: "rm", name: "bash", input: { command: "rm -r logs" } });
      mark(session, 1, { status: "pending" });
      await closeSession(session);
      expect(await store.load("approval")).toStrictEqual(session);
      expect((await store.list({ status: "paused" })).map((summary) => summary.id)).toStrictEqual(["approval"]);
      expect(await store.list({ status: "done" })).toStrictEqual([]);

      // Another instance (a reload) decides and answers.
      const resumed = await store.open("approval");
      expect(resumed).toStrictEqual(session);
      mark(resumed, 1, { status: "approved" });
      extendSession(resumed, { type: "tool_result", id: "rm", output: "removed" });
      await closeSession(resumed);
      expect(await store.load("approval")).toStrictEqual(resumed);
      expect(await store.list({ status: "paused" })).toStrictEqual([]);
      expect((await store.list({ status: "done" })).map((summary) => summary.id)).toStrictEqual(["approval"]);
    }),
  );
}

function entryCases(withStore: WithStore): void {
  it(
    "keeps custom entries in order without changing the session",
    withStore(async (store) => {
      const session = await store.open("custom");
      send(session, "hi");
      appendEntry(session, "checkpoint", { step: 1, files: ["a.ts"] });
      appendEntry(session, "marker");
      send(session, "bye");
      await closeSession(session);
      expect(await store.load("custom")).toStrictEqual(session);
      const entries = await store.loadEntries("custom");
      expect(entries.map((entry) => entry.type)).toStrictEqual(["message", "custom", "custom", "message"]);
      expect(entries[1]).toStrictEqual({
        type: "custom",
        customType: "checkpoint",
        ts: expect.any(String),
        data: { step: 1, files: ["a.ts"] },
      });
      expect(entries[2]).toStrictEqual({ type: "custom", customType: "marker", ts: expect.any(String) });
    }),
  );

  it(
    "stores content parts' data and loads it back exactly, the same image twice as well",
    withStore(async (store) => {
      const image = Buffer.from(Array.from({ length: 3000 }, (_, index) => (index * 7) % 256)).toString("base64");
      const parts = [
        { type: "text", text: "what is this?" },
        { type: "image", mediaType: "image/png", data: image },
        { type: "file", mediaType: "application/pdf", data: "JVBERi0xLjQK", filename: "a.pdf" },
        { type: "image", url: "https://example.com/a.png" },
      ];
      const session = await store.open("parts");
      send(session, "take two screenshots");
      for (const id of ["one", "two"]) {
        extendSession(session, { type: "tool_call", id, name: "screenshot", input: {} });
        extendSession(session, {
          type: "tool_result",
          id,
          output: "what is this?",
          content: parts,
        } as unknown as Message);
      }
      await closeSession(session);
      const loaded = await store.load("parts");
      expect(loaded).toStrictEqual(session);
      expect((loaded.messages[4] as unknown as { content: unknown }).content).toStrictEqual(parts);
    }),
  );
}

function listCases(withStore: WithStore): void {
  it(
    "lists sessions newest first, a page at a time, with status, owner and title",
    withStore(async (store) => {
      expect(await store.list()).toStrictEqual([]);
      for (const id of ["b", "a", "c-2"]) {
        const session = await store.open(id);
        send(session, `task ${id}`);
        await closeSession(session);
        await nextMillisecond();
      }
      const all = await store.list();
      expect(all.map((summary) => summary.id)).toStrictEqual(["c-2", "a", "b"]);
      expect(all[0]).toStrictEqual({
        id: "c-2",
        lastActivity: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d\d\dZ$/),
        status: "done",
        title: "task c-2",
      });
      const times = all.map((summary) => Date.parse(summary.lastActivity));
      expect([...times].sort((x, y) => y - x)).toStrictEqual(times);

      const first = await store.list({ limit: 2 });
      expect(first.map((summary) => summary.id)).toStrictEqual(["c-2", "a"]);
      const rest = await store.list({ limit: 2, before: first[1]!.id });
      expect(rest.map((summary) => summary.id)).toStrictEqual(["b"]);
      expect(await store.list({ before: "b" })).toStrictEqual([]);
      expect((await store.list({ before: all[0]!.lastActivity })).map((summary) => summary.id)).toStrictEqual([
        "a",
        "b",
      ]);

      const running = await store.open("a");
      send(running, "more");
      await flushSession(running);
      const listed = await store.list({ limit: 1 });
      expect(listed).toStrictEqual([
        {
          id: "a",
          lastActivity: expect.any(String),
          status: "running",
          owner: expect.any(String),
          title: "task a",
        },
      ]);
      expect((await store.list({ status: "running" })).map((summary) => summary.id)).toStrictEqual(["a"]);
      expect((await store.list({ status: "done" })).map((summary) => summary.id)).toStrictEqual(["c-2", "b"]);
      await closeSession(running);
      expect((await store.list({ status: "running" })).map((summary) => summary.id)).toStrictEqual([]);

      await expect(store.load("missing")).rejects.toMatchObject({ name: "StoreError", code: "not-found" });
      await expect(store.list({ before: "missing" })).rejects.toMatchObject({ code: "invalid-argument" });
      await expect(store.list({ limit: 0 })).rejects.toMatchObject({ code: "invalid-argument" });
    }),
  );
}

function filterCases(withStore: WithStore): void {
  it(
    "lists by workspace (the last one a session recorded) and sessions that ended in an error",
    withStore(async (store) => {
      const plans: [string, string, Message][] = [
        ["w1-done", "/w1", { role: "assistant", content: "ok", stopReason: "end_turn" }],
        ["w2-failed", "/w2", { role: "assistant", content: "", stopReason: "error" }],
        ["moved", "/w1", { role: "assistant", content: "ok" }],
      ];
      for (const [id, workspace, last] of plans) {
        const session = await store.open(id);
        appendEntry(session, "workspace", { workspace });
        send(session, `task ${id}`);
        extendSession(session, last);
        if (id === "moved") appendEntry(session, "workspace", { workspace: "/w2" });
        await closeSession(session);
        await nextMillisecond();
      }
      expect((await store.list({ workspace: "/w1" })).map((summary) => summary.id)).toStrictEqual(["w1-done"]);
      expect((await store.list({ workspace: "/w2" })).map((summary) => [summary.id, summary.status])).toStrictEqual([
        ["moved", "done"],
        ["w2-failed", "error"],
      ]);
      expect((await store.list({ status: "error" })).map((summary) => summary.id)).toStrictEqual(["w2-failed"]);
      expect((await store.list({ limit: 1 }))[0]).toMatchObject({ id: "moved", workspace: "/w2" });
    }),
  );
}

function stopCases(withStore: WithStore): void {
  it(
    "summary tells one session's status; requestStop reaches only the writer holding it now (stopRequested), never the next one",
    withStore(async (store) => {
      const { summary, requestStop, stopRequested } = store;
      if (summary === undefined || requestStop === undefined || stopRequested === undefined) {
        console.warn("sessionStoreSuite: this store has no summary/requestStop/stopRequested; stop cases skipped");
        return;
      }
      await expect(summary("nobody")).rejects.toMatchObject({ code: "not-found" });
      expect(await requestStop("nobody")).toBe(false);
      const first = await store.open("s");
      send(first, "task s");
      await flushSession(first);
      expect(await summary("s")).toMatchObject({
        id: "s",
        status: "running",
        owner: expect.any(String),
        title: "task s",
      });
      expect(await stopRequested("s")).toBeUndefined();
      expect(await requestStop("s", "the user pressed stop")).toBe(true);
      expect(await stopRequested("s")).toBe("the user pressed stop");
      await closeSession(first);
      expect(await summary("s")).toMatchObject({ id: "s", status: "done" });
      // No writer: nothing to ask, and the next writer starts clean.
      expect(await requestStop("s")).toBe(false);
      const second = await store.open("s");
      expect(await stopRequested("s")).toBeUndefined();
      expect(await requestStop("s")).toBe(true);
      expect(await stopRequested("s")).toBe("stopped");
      await closeSession(second);
      expect(await stopRequested("s")).toBeUndefined();
    }),
  );
}

// Strings a session can hold that a store's encoding may not: NUL (PostgreSQL's TEXT refuses it),
// lone surrogates (not UTF-8), and 10 MB in one field.
function encodingCases(withStore: WithStore): void {
  const odd = "a\u0000b \ud800 c\udfff d\u0000";
  it(
    "loads back every string a session holds, NUL, lone surrogates and 10 MB included, in every field, the title too",
    withStore(async (store) => {
      const big = "x".repeat(10 * 1024 * 1024);
      const session = await store.open("odd-strings");
      // The first user message becomes the title of the session's summary.
      extendSession(session, { role: "system", content: `system ${odd}` });
      extendSession(session, { role: "user", content: `${odd} title ${big}` });
      extendSessionBatch(session, [
        { type: "thinking", content: odd, signature: odd },
        { type: "tool_call", id: `call ${odd}`, name: "t", input: { [odd]: odd, list: [odd, { nested: odd }] } },
      ]);
      extendSession(session, { type: "tool_result", id: `call ${odd}`, output: { text: odd, big } });
      extendSession(session, {
        role: "user",
        content: [
          { type: "text", text: odd },
          { type: "image", url: `https://example.com/${encodeURIComponent("\u0000")}.png`, mediaType: "image/png" },
        ],
      });
      extendSession(session, { role: "assistant", content: odd, stopReason: "end_turn" });
      send(session, `after ${odd}`);
      await closeSession(session);
      const loaded = await store.load("odd-strings");
      expect(loaded).toStrictEqual(session);
      expect(loaded.messages).toHaveLength(8);
      const [summary] = await store.list();
      expect(summary?.id).toBe("odd-strings");
      // A title is for display: whatever a store keeps of it is well-formed text without NUL.
      const title = summary?.title ?? "";
      expect(title.includes("\u0000")).toBe(false);
      expect(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(title)).toBe(false);
      const again = await store.open("odd-strings");
      expect(again).toStrictEqual(loaded);
      send(again, "still writable");
      await closeSession(again);
      expect(texts(await store.load("odd-strings")).at(-1)).toBe("still writable");
    }),
    120_000,
  );

  it(
    "a session's first message with a NUL is no different: the batch is kept and later changes still record",
    withStore(async (store) => {
      const session = await store.open("nul-title");
      for (const message of initSession("s", "\u0000").messages) extendSession(session, message);
      send(session, "two");
      send(session, "three \u0000");
      await closeSession(session);
      expect(texts(await store.load("nul-title"))).toStrictEqual(["s", "\u0000", "two", "three \u0000"]);
    }),
  );
}

// The same strings in what calls and results carry beside the seed's fields.
function recordEncodingCases(withStore: WithStore): void {
  const odd = "a\u0000b \ud800 c\udfff d\u0000";
  it(
    "loads back every string in what calls and results carry: approval decisions, program calls, console lines, task records, held results",
    withStore(async (store) => {
      const big = "y".repeat(10 * 1024 * 1024);
      const session = await store.open("odd-records");
      for (const message of initSession(`s ${odd}`, odd).messages) extendSession(session, message);
      const consulted = [
        { by: "rule" as const, rule: `rule ${odd}`, action: "ask" as const, reason: odd },
        { by: "classifier" as const, name: odd, decision: "unsure" as const, reason: odd, model: odd, error: odd },
      ];
      extendSessionBatch(session, [
        { type: "tool_call", id: `a ${odd}`, name: "deploy", input: { [odd]: odd } },
        { type: "tool_call", id: `code ${odd}`, name: "run_code", input: { code: odd } },
      ]);
      mark(session, 2, {
        status: "approved",
        reason: odd,
        input: { [odd]: odd },
        decidedBy: { by: "human", user: odd, reason: odd },
        consulted,
        at: "2026-01-01T00:00:00.000Z",
      });
      const task = {
        id: `task_${odd}`,
        status: "running" as const,
        onRestart: "lost" as const,
        attempt: 1,
        startedAt: "2026-01-01T00:00:00.000Z",
      };
      extendSession(session, { type: "tool_result", id: `a ${odd}`, output: odd, task });
      const result = session.messages[4] as ToolResultMessage;
      // Settled in place, as a task's settling records it.
      result.task = {
        ...task,
        status: "completed",
        settledAt: "2026-01-01T00:00:01.000Z",
        output: { text: odd, big },
        content: [{ type: "text", text: odd }],
        reason: odd,
      };
      notifySessionChange(session, { type: "update", index: 4, message: result, reason: "task" });
      extendSession(session, {
        type: "tool_result",
        id: `code ${odd}`,
        output: odd,
        programCalls: [
          {
            id: `code ${odd}.1`,
            name: odd,
            input: { [odd]: [odd, { nested: odd }] },
            output: { text: odd, big },
            isError: true,
            content: [{ type: "text", text: odd }],
          },
        ],
        logs: [odd, big],
      });
      // A paused turn: one call waits, the other's result is held on it.
      extendSessionBatch(session, [
        {
          type: "tool_call",
          id: `p ${odd}`,
          name: "deploy",
          input: {},
          approval: { status: "pending", reason: odd, consulted },
        },
        {
          type: "tool_call",
          id: `h ${odd}`,
          name: "run_code",
          input: { code: odd },
          heldResult: {
            output: odd,
            content: [{ type: "text", text: odd }],
            programCalls: [{ id: `h ${odd}.1`, name: odd, input: { [odd]: odd }, output: odd }],
            logs: [odd],
            task: { ...task, id: `task_h_${odd}`, reason: odd },
          },
        },
      ]);
      await closeSession(session);
      const loaded = await store.load("odd-records");
      expect(loaded).toStrictEqual(session);
      expect(loaded.messages).toHaveLength(8);
      const again = await store.open("odd-records");
      expect(again).toStrictEqual(loaded);
      await closeSession(again);
    }),
    120_000,
  );
}

// A part's `blob` is a store's own reference to bytes it keeps: none may come in with a part.
function blobCases(withStore: WithStore): void {
  it(
    "never takes a blob reference from a part: a session cannot load another session's image",
    withStore(async (store) => {
      const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
      const owner = await store.open("owner");
      send(owner, [{ type: "image", mediaType: "image/png", data: png }]);
      await closeSession(owner);
      const hash = createHash("sha256").update(Buffer.from(png, "base64")).digest("hex");
      const other = await store.open("other");
      send(other, "mine");
      const smuggled = [
        { type: "image", mediaType: "image/png", data: "iVBORw0KGgp=", blob: hash },
        { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=", blob: hash },
      ];
      for (const part of smuggled) expect(() => send(other, [part as never])).toThrow(/"blob"|canonical/);
      send(other, "still mine");
      await closeSession(other);
      const loaded = await store.load("other");
      expect(texts(loaded)).toStrictEqual(["mine", "still mine"]);
      expect(JSON.stringify(loaded)).not.toContain(png.slice(0, 40));
      expect((await store.load("owner")).messages).toStrictEqual(owner.messages);
    }),
  );
}

function texts(session: Session): string[] {
  return session.messages.map((message) =>
    "content" in message && typeof message.content === "string" ? message.content : "",
  );
}

// An approval mark or decision, set in place as the library does it.
function mark(session: Session, index: number, approval: NonNullable<ToolCallMessage["approval"]>): void {
  const call = session.messages[index] as ToolCallMessage;
  call.approval = approval;
  notifySessionChange(session, { type: "update", index, message: call, reason: "approval" });
}

// Sessions written in different milliseconds have different last activity times.
async function nextMillisecond(): Promise<void> {
  const start = Date.now();
  while (Date.now() < start + 2) await new Promise((resolve) => setTimeout(resolve, 1));
}
