import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  compactSession,
  extendSession,
  onSessionChange,
  resolveApproval,
  send,
  tool,
  type ModelMessage,
} from "simple-agent-loop";
import {
  appendEntry,
  closeSession,
  isStoreError,
  loadEntries,
  loadSession,
  openSession,
} from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { tempDir, warningsCollector } from "./helpers.ts";

const lines = (path: string): unknown[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as unknown);

const system = (content: string): string =>
  JSON.stringify({ type: "message", message: { role: "system", content, ts: "2025-01-01T00:00:00.000Z" } });
const user = (content: string): string =>
  JSON.stringify({ type: "message", message: { role: "user", content, ts: "2025-01-01T00:00:01.000Z" } });

describe("the session log on disk", () => {
  it("is one JSON entry per line: messages, replacements, updates, custom entries", async () => {
    const path = join(tempDir(), "format.jsonl");
    const session = await openSession(path);
    const ts = expect.any(String);
    extendSession(session, { role: "user", content: "hi", ts: "2025-01-01T00:00:00.000Z" });
    extendSession(session, { type: "thinking", content: "x".repeat(300) });
    extendSession(session, { role: "assistant", content: "a" });
    extendSession(session, { role: "assistant", content: "b" });
    compactSession(session);
    extendSession(session, { type: "tool_call", id: "c1", name: "deploy", input: {}, approval: { status: "pending" } });
    resolveApproval(session, "c1", { approved: true });
    appendEntry(session, "bookmark", { label: "before deploy" });
    await closeSession(session);
    expect(lines(path)).toStrictEqual([
      { type: "message", message: { role: "user", content: "hi", ts: "2025-01-01T00:00:00.000Z" } },
      { type: "message", message: { type: "thinking", content: "x".repeat(300), ts } },
      { type: "message", message: { role: "assistant", content: "a", ts } },
      { type: "message", message: { role: "assistant", content: "b", ts } },
      {
        type: "replace",
        index: 1,
        reason: "compaction",
        ts,
        message: { type: "thinking", content: `${"x".repeat(120)}...`, compacted: true, ts },
        previous: { type: "thinking", content: "x".repeat(300), ts },
      },
      {
        type: "message",
        message: { type: "tool_call", id: "c1", name: "deploy", input: {}, approval: { status: "pending" }, ts },
      },
      {
        type: "update",
        index: 4,
        reason: "approval",
        ts,
        message: {
          type: "tool_call",
          id: "c1",
          name: "deploy",
          input: {},
          approval: { status: "approved", input: {}, decidedBy: { by: "human" }, at: expect.any(String) },
          ts,
        },
      },
      { type: "custom", customType: "bookmark", ts, data: { label: "before deploy" } },
    ]);
    expect(await loadSession(path)).toStrictEqual(session);
  });

  it("keeps unknown fields and entry types of newer versions, in the file and in what it reads", async () => {
    const path = join(tempDir(), "newer.jsonl");
    const original = [
      JSON.stringify({ type: "session-header", version: 7, cwd: "/somewhere" }),
      JSON.stringify({
        type: "message",
        message: { role: "system", content: "s", ts: "2025-01-01T00:00:00.000Z", cacheHint: "long" },
        origin: "import",
      }),
      JSON.stringify({
        type: "message",
        message: { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=", ts: "2025-01-01T00:00:01.000Z" },
      }),
      JSON.stringify({ type: "model-change", model: "some-model", ts: "2025-01-01T00:00:02.000Z" }),
      JSON.stringify({ type: "custom", customType: "note", data: [1, 2], extra: true }),
      "",
    ].join("\n");
    writeFileSync(path, original);
    const session = await openSession(path);
    expect(session.messages).toStrictEqual([
      { role: "system", content: "s", ts: "2025-01-01T00:00:00.000Z", cacheHint: "long" },
      { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=", ts: "2025-01-01T00:00:01.000Z" },
    ]);
    send(session, "go on");
    await closeSession(session);
    // Appended after, never rewritten: the original bytes are all there, unchanged.
    const now = readFileSync(path, "utf8");
    expect(now.startsWith(original)).toBe(true);
    const entries = await loadEntries(path);
    expect(entries.slice(0, 5)).toStrictEqual(
      original
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as unknown),
    );
    expect(entries[5]).toStrictEqual({
      type: "message",
      message: { role: "user", content: "go on", ts: expect.any(String) },
    });
    expect(await loadSession(path)).toStrictEqual(session);
  });

  it("a truncated last line (a crash mid-write) is dropped with a warning; the writer cuts only those bytes and goes on", async () => {
    const path = join(tempDir(), "torn.jsonl");
    const complete = `${system("s")}\n${user("u")}\n`;
    const torn = `{"type":"message","message":{"type":"tool_result","id":"c1","outp`;
    writeFileSync(path, complete + torn);

    const read = warningsCollector();
    expect(
      (await loadSession(path, read)).messages.map((message) => ("role" in message ? message.content : "")),
    ).toStrictEqual(["s", "u"]);
    expect(read.warnings).toStrictEqual([
      `${path}:3: partial last line (${torn.length} bytes), the end of a write cut short by a crash: left out.`,
    ]);
    expect(readFileSync(path, "utf8")).toBe(complete + torn); // reading changes nothing

    const open = warningsCollector();
    const session = await openSession(path, open);
    expect(open.warnings).toStrictEqual([
      `${path}:3: partial last line (${torn.length} bytes), the end of a write cut short by a crash: cut off before the next append.`,
    ]);
    expect(readFileSync(path, "utf8")).toBe(complete);
    send(session, "again");
    await closeSession(session);
    const after = readFileSync(path, "utf8");
    expect(after.startsWith(complete)).toBe(true);
    expect(after.slice(complete.length)).toMatch(
      /^\{"type":"message","message":\{"role":"user","content":"again","ts":"[^"]+"\}\}\n$/,
    );
    const clean = warningsCollector();
    expect(await loadSession(path, clean)).toStrictEqual(session);
    expect(clean.warnings).toStrictEqual([]);
  });

  it("a complete last line missing only its newline is kept, and the next entry starts on a new line", async () => {
    const path = join(tempDir(), "unterminated.jsonl");
    const original = `${system("s")}\n${user("u")}`;
    writeFileSync(path, original);
    const { warnings, onWarning } = warningsCollector();
    const session = await openSession(path, { onWarning });
    expect(session.messages).toHaveLength(2);
    send(session, "next");
    await closeSession(session);
    expect(warnings).toStrictEqual([]);
    expect(readFileSync(path, "utf8").startsWith(`${original}\n{"type":"message"`)).toBe(true);
    expect((await loadSession(path)).messages).toHaveLength(3);
  });

  it("any other malformed line is an error naming the file and the line; nothing is lost or rewritten", async () => {
    const directory = tempDir();
    const cases: [string, string, RegExp][] = [
      ["not JSON", "{not json}", /:2: not valid JSON/],
      ["not an object", "[1, 2]", /:2: an entry must be a JSON object/],
      ["no type", JSON.stringify({ message: { role: "user", content: "u" } }), /:2: an entry needs a string "type"/],
      [
        "a message entry without a message",
        JSON.stringify({ type: "message", message: "hi" }),
        /:2: a "message" entry needs a message object/,
      ],
      [
        "a replacement beyond the session",
        JSON.stringify({ type: "replace", index: 5, reason: "compaction", message: { role: "user", content: "u" } }),
        /:2: "replace" of message 5, but the session has 1 messages/,
      ],
      [
        "an update without an index",
        JSON.stringify({ type: "update", message: { role: "user", content: "u" } }),
        /:2: a "update" entry needs a non-negative integer "index"/,
      ],
      [
        "a custom entry without customType",
        JSON.stringify({ type: "custom", data: 1 }),
        /:2: a "custom" entry needs a string "customType"/,
      ],
    ];
    for (const [name, line, expected] of cases) {
      const path = join(directory, `${name.replaceAll(" ", "-")}.jsonl`);
      const content = `${system("s")}\n${line}\n${user("u")}\n`;
      writeFileSync(path, content);
      for (const read of [() => loadSession(path), () => openSession(path)]) {
        const error: unknown = await read().then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(isStoreError(error), name).toBe(true);
        expect(error, name).toMatchObject({ code: "malformed", path, line: 2 });
        expect((error as Error).message, name).toMatch(
          new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}${expected.source}`),
        );
      }
      expect(readFileSync(path, "utf8"), name).toBe(content);
      // The failed open released its lock.
      expect(existsSync(`${path}.lock`), name).toBe(false);
    }
  });

  it("a malformed last line that ends with a newline is not a torn write: an error too", async () => {
    const path = join(tempDir(), "bad-last.jsonl");
    writeFileSync(path, `${system("s")}\n{"type":"message","mess\n`);
    await expect(loadSession(path)).rejects.toMatchObject({ code: "malformed", line: 2 });
  });

  it("is append-only: every change adds bytes at the end, the bytes before never change", async () => {
    const path = join(tempDir(), "append-only.jsonl");
    const session = await openSession(path);
    let previous = Buffer.alloc(0);
    let changes = 0;
    let batched = 0;
    // Registered after the store's listener, so it sees each change once it is written.
    onSessionChange(session, (change) => {
      // A model turn is written whole at its last message.
      if (change.type === "append" && change.more === true) {
        batched++;
        return;
      }
      const now = readFileSync(path);
      expect(now.length).toBeGreaterThan(previous.length);
      expect(now.subarray(0, previous.length).equals(previous)).toBe(true);
      previous = now;
      changes++;
    });
    const deploy = tool({
      name: "deploy",
      description: "Deploy.",
      inputSchema: { type: "object" },
      requireApproval: true,
      handler: () => "ok",
    });
    const think = (text: string): ModelMessage => ({ type: "thinking", content: `${text} ${"hmm ".repeat(50)}` });
    extendSession(session, { role: "system", content: "s" });
    send(session, "u");
    await agentLoop(
      scriptedModel([[think("one"), { type: "tool_call", id: "1", name: "deploy", input: { note: "n".repeat(300) } }]]),
      [deploy],
      session,
    );
    resolveApproval(session, "1", { approved: true });
    await agentLoop(scriptedModel([[think("two"), { role: "assistant", content: "deployed" }]]), [deploy], session);
    send(session, "more");
    await agentLoop(scriptedModel([[think("three"), { role: "assistant", content: "done" }]]), [deploy], session, {
      compaction: { keepTurns: 1, batch: 1 },
    });
    await closeSession(session);
    const kinds = (await loadEntries(path)).map((entry) => entry.type);
    expect(new Set(kinds)).toStrictEqual(new Set(["message", "update", "replace"]));
    expect(batched).toBeGreaterThan(0);
    expect(changes + batched).toBe(kinds.length);
  });
});
