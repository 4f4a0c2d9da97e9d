import {
  appendFileSync,
  closeSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { LogUpdate } from "simple-agent-loop/viewer";
import { serveViewer } from "simple-agent-loop/viewer";
import { address, line, openEventStream, tempDir } from "./helpers.ts";

const entry = (content: string) => ({ type: "message", message: { role: "user", content } });

/** A viewer of a fresh log holding `initial`, and its event stream. Polls often, so tests do not wait on it. */
async function follow(initial: string) {
  const path = join(tempDir(), "live.jsonl");
  writeFileSync(path, initial);
  const viewer = await serveViewer(path, { pollInterval: 50 });
  const stream = await openEventStream(address(viewer, `api/events`));
  return {
    path,
    next: stream.next,
    /** The next updates merged until they hold `count` records and problems (a change may arrive in several reads). */
    collect: (count: number): Promise<LogUpdate> => merge({ reset: false, records: [], problems: [] }, count),
    /**
     * The next update, a reset, with the updates after it merged in until it holds `count` records:
     * a file rewritten by writeFileSync is empty for a moment, and a read may see it so.
     */
    reset: async (count: number): Promise<LogUpdate> => {
      const first = await stream.next();
      if (!first.reset) throw new Error(`expected a reset, got ${JSON.stringify(first)}`);
      return merge(first, count);
    },
    close: async () => {
      stream.close();
      await viewer.close();
    },
  };

  async function merge(merged: LogUpdate, count: number): Promise<LogUpdate> {
    while (merged.records.length + merged.problems.length < count) {
      const update = await stream.next();
      if (update.reset) throw new Error(`unexpected reset: ${JSON.stringify(update)}`);
      merged.records.push(...update.records);
      merged.problems.push(...update.problems);
    }
    return merged;
  }
}

describe("the event stream follows the log live", () => {
  it("sends the whole log first, then only the lines appended, numbered on", async () => {
    const live = await follow(line(entry("one")) + line(entry("two")));
    try {
      expect(await live.next()).toStrictEqual({
        reset: true,
        records: [
          { line: 1, entry: entry("one") },
          { line: 2, entry: entry("two") },
        ],
        problems: [],
      });
      appendFileSync(live.path, `\n${line(entry("three"))}${line(entry("four"))}`);
      expect(await live.collect(2)).toStrictEqual({
        reset: false,
        records: [
          { line: 4, entry: entry("three") },
          { line: 5, entry: entry("four") },
        ],
        problems: [],
      });
    } finally {
      await live.close();
    }
  });

  it("holds back a torn last line until the rest of it is written, saying it is there", async () => {
    const whole = line(entry("written in two parts"));
    const live = await follow(line(entry("one")) + whole.slice(0, 20));
    try {
      expect(await live.next()).toStrictEqual({
        reset: true,
        records: [{ line: 1, entry: entry("one") }],
        problems: [],
        partial: { line: 2, bytes: 20 },
      });
      appendFileSync(live.path, whole.slice(20, 30));
      expect(await live.next()).toStrictEqual({
        reset: false,
        records: [],
        problems: [],
        partial: { line: 2, bytes: 30 },
      });
      appendFileSync(live.path, whole.slice(30));
      expect(await live.collect(1)).toStrictEqual({
        reset: false,
        records: [{ line: 2, entry: entry("written in two parts") }],
        problems: [],
      });
    } finally {
      await live.close();
    }
  });

  it("sends a last line without its newline once it is a whole entry, and numbers the next line after it", async () => {
    const live = await follow(line(entry("one")) + JSON.stringify(entry("no newline")));
    try {
      expect((await live.next()).records).toStrictEqual([
        { line: 1, entry: entry("one") },
        { line: 2, entry: entry("no newline") },
      ]);
      // What openSession writes after such a line: the newline first.
      appendFileSync(live.path, `\n${line(entry("three"))}`);
      expect(await live.collect(1)).toStrictEqual({
        reset: false,
        records: [{ line: 3, entry: entry("three") }],
        problems: [],
      });
    } finally {
      await live.close();
    }
  });

  it("reports a malformed line by its number and goes on reading", async () => {
    const live = await follow(line(entry("one")));
    try {
      await live.next();
      appendFileSync(live.path, `{"type":"message","message":\n${line(entry("after"))}`);
      expect(await live.collect(2)).toStrictEqual({
        reset: false,
        records: [{ line: 3, entry: entry("after") }],
        problems: [{ line: 2, message: expect.stringMatching(/^not valid JSON/) }],
      });
    } finally {
      await live.close();
    }
  });

  it("sends everything again from the start when the file is truncated, rewritten in place or replaced", async () => {
    const live = await follow(line(entry("one")) + line(entry("two")));
    try {
      await live.next();
      writeFileSync(live.path, line(entry("shorter")));
      expect(await live.reset(1)).toStrictEqual({
        reset: true,
        records: [{ line: 1, entry: entry("shorter") }],
        problems: [],
      });
      // Same size, other bytes: a rewrite, not an append.
      writeFileSync(live.path, line(entry("SHORTER")));
      expect(await live.reset(1)).toStrictEqual({
        reset: true,
        records: [{ line: 1, entry: entry("SHORTER") }],
        problems: [],
      });
      const replacement = `${live.path}.new`;
      writeFileSync(replacement, line(entry("shorter")) + line(entry("replaced by rename")));
      renameSync(replacement, live.path);
      expect(await live.next()).toStrictEqual({
        reset: true,
        records: [
          { line: 1, entry: entry("shorter") },
          { line: 2, entry: entry("replaced by rename") },
        ],
        problems: [],
      });
      appendFileSync(live.path, line(entry("appended to the new file")));
      expect((await live.collect(1)).records).toStrictEqual([{ line: 3, entry: entry("appended to the new file") }]);
    } finally {
      await live.close();
    }
  });

  it("sends everything again when a rewrite in place keeps the length and both ends, and changes only the middle", async () => {
    const padding = "p".repeat(200);
    const lines = [line(entry(`first ${padding}`)), line(entry("middle: before")), line(entry(`last ${padding}`))];
    const live = await follow(lines.join(""));
    try {
      expect((await live.next()).records).toHaveLength(3);
      // Let the clock move on: a file's time may change only every few milliseconds.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const handle = openSync(live.path, "r+");
      writeSync(handle, line(entry("middle: AFTER!")), Buffer.byteLength(lines[0]!));
      closeSync(handle);
      expect(await live.reset(3)).toStrictEqual({
        reset: true,
        records: [entry(`first ${padding}`), entry("middle: AFTER!"), entry(`last ${padding}`)].map((value, index) => ({
          line: index + 1,
          entry: value,
        })),
        problems: [],
      });
      // And it goes on following the file.
      appendFileSync(live.path, line(entry("appended")));
      expect((await live.collect(1)).records).toStrictEqual([{ line: 4, entry: entry("appended") }]);
    } finally {
      await live.close();
    }
  });

  it("sends everything again when a token is redacted in place with the same length and the times put back", async () => {
    const lines = [line(entry("one")), line(entry("my key is sk-LEAKED-0123456789")), line(entry("three"))];
    const live = await follow(lines.join(""));
    try {
      // Whole seconds, which utimes sets exactly.
      const times = new Date("2026-01-02T03:04:05Z");
      utimesSync(live.path, times, times);
      expect((await live.next()).records).toHaveLength(3);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(statSync(live.path).mtimeMs).toBe(times.getTime());
      const handle = openSync(live.path, "r+");
      writeSync(handle, line(entry("my key is [redacted-000000000]")), Buffer.byteLength(lines[0]!));
      closeSync(handle);
      // As `touch -r` would: the size and the modification time say nothing changed.
      utimesSync(live.path, times, times);
      expect((await live.reset(3)).records.map((record) => record.entry)).toStrictEqual([
        entry("one"),
        entry("my key is [redacted-000000000]"),
        entry("three"),
      ]);
    } finally {
      await live.close();
    }
  });

  it("sends everything again when a middle line is redacted in place and the log grows before the next look", async () => {
    const padding = "p".repeat(200);
    const lines = [line(entry(`first ${padding}`)), line(entry("key sk-LEAKED-0123")), line(entry(`last ${padding}`))];
    const live = await follow(lines.join(""));
    try {
      expect((await live.next()).records).toHaveLength(3);
      await new Promise((resolve) => setTimeout(resolve, 50));
      // The redaction and an append land between two polls: the size moved, both ends are as they were.
      const handle = openSync(live.path, "r+");
      writeSync(handle, line(entry("key [redacted!!!]")), Buffer.byteLength(lines[0]!));
      closeSync(handle);
      appendFileSync(live.path, line(entry("appended")));
      const update = await live.reset(4);
      expect(update.records.map((record) => record.entry)).toStrictEqual([
        entry(`first ${padding}`),
        entry("key [redacted!!!]"),
        entry(`last ${padding}`),
        entry("appended"),
      ]);
    } finally {
      await live.close();
    }
  });

  it("never reads a file a symbolic link swapped in at the log's path leads to", async () => {
    const directory = tempDir();
    const outside = tempDir();
    writeFileSync(join(outside, "secret.jsonl"), line(entry("SECRET outside the sessions folder")));
    mkdirSync(join(directory, "sessions"));
    const path = join(directory, "sessions", "a.jsonl");
    writeFileSync(path, line(entry("one")));
    const viewer = await serveViewer(join(directory, "sessions"), { pollInterval: 50 });
    const stream = await openEventStream(address(viewer, "api/events?file=a.jsonl"));
    try {
      expect((await stream.next()).records).toHaveLength(1);
      rmSync(path);
      symlinkSync(join(outside, "secret.jsonl"), path);
      // The link is refused (a problem, or the file missing), and nothing of what it leads to is sent.
      const seen: LogUpdate[] = [];
      for (;;) {
        const update = await stream.next();
        seen.push(update);
        if (update.reset || update.problems.some((problem) => problem.line === undefined)) break;
      }
      // A file put back at the path is followed again.
      rmSync(path);
      writeFileSync(path, line(entry("back")));
      for (;;) {
        const update = await stream.next();
        seen.push(update);
        if (update.records.some((record) => JSON.stringify(record.entry).includes("back"))) break;
      }
      expect(JSON.stringify(seen)).not.toContain("SECRET");
    } finally {
      stream.close();
      await viewer.close();
    }
  });

  it("says when the file is gone, and reads it again when it comes back", async () => {
    const live = await follow(line(entry("one")));
    try {
      await live.next();
      rmSync(live.path);
      expect(await live.next()).toStrictEqual({ reset: true, records: [], problems: [], missing: true });
      writeFileSync(live.path, line(entry("back")));
      expect(await live.reset(1)).toStrictEqual({
        reset: true,
        records: [{ line: 1, entry: entry("back") }],
        problems: [],
      });
    } finally {
      await live.close();
    }
  });
});

describe("a long log is sent in pieces", () => {
  it("sends every line once, in order, the first piece resetting; lines holding a carriage return arrive as written", async () => {
    const big = (index: number) => entry(`${index}: ${"output line\n".repeat(3000)}`);
    const lines = Array.from({ length: 40 }, (_, index) => line(big(index)));
    // A carriage return is whitespace between JSON tokens, and breaks a line of an event stream.
    lines.push('{"type":"custom",\r"customType":"after a carriage return"}\n', '{"not json\r\n');
    const live = await follow(lines.join(""));
    try {
      const first = await live.next();
      expect(first.reset).toBe(true);
      const whole = await (async () => {
        const merged = { ...first, records: [...first.records], problems: [...first.problems] };
        while (merged.records.length + merged.problems.length < lines.length) {
          const update = await live.next();
          expect(update.reset).toBe(false);
          merged.records.push(...update.records);
          merged.problems.push(...update.problems);
        }
        return merged;
      })();
      expect(first.records.length).toBeLessThan(40);
      expect(whole.records).toStrictEqual([
        ...Array.from({ length: 40 }, (_, index) => ({ line: index + 1, entry: big(index) })),
        { line: 41, entry: { type: "custom", customType: "after a carriage return" } },
      ]);
      expect(whole.problems).toStrictEqual([
        { line: 42, message: expect.stringMatching(/^not valid JSON \(.+\): \{"not json$/) },
      ]);
    } finally {
      await live.close();
    }
  });
});
