// A log that grows by one line far past maxLineBytes while a page streams it: the line is skipped
// with a marker, memory stays bounded, and the entries after it still arrive.
import { appendFileSync, closeSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { serveViewer } from "simple-agent-loop/viewer";
import { address, line, openEventStream, tempDir } from "./helpers.ts";

const entry = (index: number) => ({ type: "message", message: { role: "user", content: `m${index}` } });

describe("serveViewer: a huge line appended while streaming", () => {
  it("skips a line many times maxLineBytes written in one go and keeps streaming what follows", async () => {
    const path = join(tempDir(), "huge.jsonl");
    writeFileSync(path, line(entry(1)));
    const viewer = await serveViewer(path, { maxLineBytes: 64 * 1024, pollInterval: 50 });
    try {
      const stream = await openEventStream(address(viewer, "api/events"));
      expect((await stream.next()).records).toStrictEqual([{ line: 1, entry: entry(1) }]);
      // 64 MB of one JSON string, 1,000 times the cap, then the next entry.
      const fd = openSync(path, "a");
      const chunk = Buffer.alloc(1024 * 1024, "x");
      writeSync(fd, '{"type":"message","message":{"role":"user","content":"');
      // Written across several polls, so the stream sees the line while it grows, then whole.
      for (let index = 0; index < 64; index++) {
        writeSync(fd, chunk);
        if (index % 16 === 15) await new Promise((resolve) => setTimeout(resolve, 150));
      }
      writeSync(fd, `"}}\n${line(entry(3))}`);
      closeSync(fd);
      const records: unknown[] = [];
      const problems: unknown[] = [];
      while (records.length === 0) {
        const update = await stream.next();
        records.push(...update.records);
        problems.push(...update.problems);
      }
      expect(records).toStrictEqual([{ line: 3, entry: entry(3) }]);
      expect(problems).toStrictEqual([
        {
          line: 2,
          message: expect.stringMatching(
            /^a line of 64\.0 MiB, longer than the viewer reads \(65536 bytes\): not shown$/,
          ),
        },
      ]);
      appendFileSync(path, line(entry(4)));
      expect((await stream.next()).records).toStrictEqual([{ line: 4, entry: entry(4) }]);
      stream.close();
    } finally {
      await viewer.close();
    }
  }, 60_000);
});
