import { execFileSync, spawn } from "node:child_process";
import { existsSync, linkSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { send } from "simple-agent-loop";
import { closeSession, loadSession, openSession } from "simple-agent-loop/store";
import { tempDir, warningsCollector } from "./helpers.ts";

const system = (content: string): string =>
  JSON.stringify({ type: "message", message: { role: "system", content, ts: "2025-01-01T00:00:00.000Z" } });
const message = (value: unknown): string => JSON.stringify({ type: "message", message: value });

describe("a session file from elsewhere: repaired only where provably torn, checked before use", () => {
  it("a byte-order mark is not a tear: the file loads and opens unchanged, and appends go after it", async () => {
    for (const ending of ["\n", ""]) {
      const path = join(tempDir(), "bom.jsonl");
      const original = `\uFEFF${system("s")}${ending}`;
      writeFileSync(path, original);
      const { warnings, onWarning } = warningsCollector();
      expect((await loadSession(path, { onWarning })).messages).toMatchObject([{ role: "system", content: "s" }]);
      const session = await openSession(path, { onWarning });
      expect(readFileSync(path, "utf8")).toBe(original);
      send(session, "more");
      await closeSession(session);
      expect(warnings).toStrictEqual([]);
      expect(readFileSync(path, "utf8").startsWith(`\uFEFF${system("s")}\n`)).toBe(true);
      expect((await loadSession(path)).messages).toHaveLength(2);
    }
  });

  it("a last line without newline that is wrong before its end is reported, never cut", async () => {
    for (const tail of [
      '{"type":"message","message":{"role":"user","content":"u"}}x',
      '{"type" "message"}',
      "not json at all",
    ]) {
      const path = join(tempDir(), "bad-tail.jsonl");
      const original = `${system("s")}\n${tail}`;
      writeFileSync(path, original);
      await expect(loadSession(path), tail).rejects.toMatchObject({ code: "malformed", line: 2 });
      await expect(openSession(path), tail).rejects.toMatchObject({ code: "malformed", line: 2 });
      expect(readFileSync(path, "utf8"), tail).toBe(original);
      expect(existsSync(`${path}.lock`)).toBe(false);
    }
  });

  it("a write cut short anywhere (even inside a multi-byte character) is torn and only it is cut", async () => {
    const entry = message({ role: "user", content: "héllo → 世界", ts: "2025-01-01T00:00:00.000Z" });
    const bytes = Buffer.from(entry);
    for (let cut = 1; cut < bytes.length; cut += 3) {
      const path = join(tempDir(), "cut.jsonl");
      const complete = `${system("s")}\n`;
      writeFileSync(path, Buffer.concat([Buffer.from(complete), bytes.subarray(0, cut)]));
      const { warnings, onWarning } = warningsCollector();
      const session = await openSession(path, { onWarning });
      await closeSession(session);
      expect(warnings, `cut at ${cut}`).toHaveLength(1);
      expect(readFileSync(path, "utf8"), `cut at ${cut}`).toBe(complete);
    }
  });

  it("refuses a line whose message has the wrong shape, naming the line: ids and names are strings, a call is answered once", async () => {
    const call = { type: "tool_call", id: "c1", name: "add", input: {} };
    const cases: [string, unknown[], RegExp][] = [
      [
        "a numeric call id",
        [{ ...call, id: 7 }],
        /:2: a "tool_call" message needs a non-empty string "id", not a number/,
      ],
      [
        "an object as a tool name",
        [{ ...call, name: { toString: 1 } }],
        /:2: a "tool_call" message needs a non-empty string "name", not an object/,
      ],
      [
        "an array as input",
        [{ ...call, input: [] }],
        /:2: a "tool_call" message needs an object "input", not an array/,
      ],
      [
        "content that is an object",
        [{ role: "assistant", content: { id: "turn-3" } }],
        /:2: a "assistant" message needs a string "content", not an object/,
      ],
      [
        "a thinking message without content",
        [{ type: "thinking" }],
        /:2: a "thinking" message needs a string "content", not nothing/,
      ],
      [
        "a result without output",
        [call, { type: "tool_result", id: "c1" }],
        /:3: a "tool_result" message needs an "output"/,
      ],
      [
        "a call answered twice",
        [call, { type: "tool_result", id: "c1", output: 1 }, { type: "tool_result", id: "c1", output: 2 }],
        /:4: a second result for tool call "c1"/,
      ],
      // sessionMetrics adds a classifier's usage into the session's cost: counts, not text.
      [
        "a classifier's usage counted in text",
        [
          {
            ...call,
            approval: {
              status: "pending",
              consulted: [{ by: "classifier", usage: { inputTokens: "9e9", outputTokens: 1 } }],
            },
          },
        ],
        /:2: .*"approval.consulted\[0\]" needs "usage.inputTokens" to be a non-negative integer, not a string/,
      ],
      [
        "a classifier's usage without its counts",
        [{ ...call, approval: { status: "approved", decidedBy: { by: "classifier", usage: {} } } }],
        /:2: .*"approval.decidedBy" needs "usage.inputTokens" and "usage.outputTokens"/,
      ],
    ];
    for (const [name, messages, expected] of cases) {
      const path = join(tempDir(), "shape.jsonl");
      const content = `${[system("s"), ...messages.map(message)].join("\n")}\n`;
      writeFileSync(path, content);
      const error = await loadSession(path).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error, name).toMatchObject({ name: "StoreError", code: "malformed" });
      expect((error as Error).message, name).toMatch(expected);
      await expect(openSession(path), name).rejects.toMatchObject({ code: "malformed" });
      expect(readFileSync(path, "utf8"), name).toBe(content);
    }
  });

  it("a call id reused in a later turn (some providers do) answered once per call loads", async () => {
    const path = join(tempDir(), "reused.jsonl");
    const call = { type: "tool_call", id: "call_0", name: "add", input: {} };
    const result = { type: "tool_result", id: "call_0", output: 1 };
    writeFileSync(
      path,
      `${[system("s"), message(call), message(result), message({ role: "assistant", content: "a" }), message(call), message(result)].join("\n")}\n`,
    );
    expect((await loadSession(path)).messages).toHaveLength(6);
  });
});

describe("the store opens only what it can lock and read safely", () => {
  it("a FIFO or a device is a clear error at once, and leaves no lock", async () => {
    const directory = tempDir();
    const fifo = join(directory, "fifo.jsonl");
    execFileSync("mkfifo", [fifo]);
    for (const path of [fifo, "/dev/zero"]) {
      for (const read of [() => loadSession(path), () => openSession(path)]) {
        const error = await read().then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(error, path).toMatchObject({ name: "StoreError", code: "invalid-argument" });
        expect((error as Error).message, path).toMatch(/not a regular file/);
      }
    }
    expect(existsSync(`${fifo}.lock`)).toBe(false);
  });

  it("one writer per file, whatever path names it: a symbolic link to an open session is locked, a hard-linked file is never opened for writing", async () => {
    const directory = tempDir();
    const path = join(directory, "real.jsonl");
    const session = await openSession(path);
    send(session, "hello");
    symlinkSync(path, join(directory, "via-symlink.jsonl"));
    symlinkSync(directory, join(directory, "..", `${basename(directory)}-linked-dir`));
    await expect(openSession(join(directory, "via-symlink.jsonl"))).rejects.toMatchObject({ code: "locked" });
    await expect(openSession(join(`${directory}-linked-dir`, "real.jsonl"))).rejects.toMatchObject({ code: "locked" });
    send(session, "still the only writer");
    await closeSession(session);
    // Closed: the symlink opens the real file (and locks it, not the link).
    const again = await openSession(join(directory, "via-symlink.jsonl"));
    expect(again.messages).toHaveLength(2);
    await expect(openSession(path)).rejects.toMatchObject({ code: "locked" });
    // A hard link made while it is open: no second writer through it, nor through the first name later.
    linkSync(path, join(directory, "via-hardlink.jsonl"));
    await expect(openSession(join(directory, "via-hardlink.jsonl"))).rejects.toMatchObject({
      code: "invalid-argument",
      message: expect.stringMatching(/2 hard links/),
    });
    send(again, "written once");
    await closeSession(again);
    await expect(openSession(path)).rejects.toMatchObject({ code: "invalid-argument" });
    expect((await loadSession(join(directory, "via-hardlink.jsonl"))).messages).toHaveLength(3);
    rmSync(`${directory}-linked-dir`);
  });

  it("takes over a stale lock whose pid now belongs to an unrelated process started later", async () => {
    const path = join(tempDir(), "reused-pid.jsonl");
    writeFileSync(path, `${system("s")}\n`);
    const unrelated = spawn("sleep", ["60"], { stdio: "ignore" });
    try {
      await new Promise((resolve) => unrelated.once("spawn", resolve));
      const longAgo = new Date(Date.now() - 3_600_000).toISOString();
      writeFileSync(
        `${path}.lock`,
        `${JSON.stringify({ pid: unrelated.pid, hostname: hostname(), since: longAgo, started: longAgo })}\n`,
      );
      const session = await openSession(path);
      expect(session.messages).toHaveLength(1);
      await closeSession(session);
      // The same live process recorded with its real start time holds the lock.
      const started = new Date(Date.now() - 1000).toISOString();
      writeFileSync(
        `${path}.lock`,
        `${JSON.stringify({ pid: unrelated.pid, hostname: hostname(), since: started, started: lockStartOf(unrelated.pid!) ?? started })}\n`,
      );
      await expect(openSession(path)).rejects.toMatchObject({ code: "locked" });
    } finally {
      unrelated.kill();
    }
  });
});

// What the store records as a process's start (read the same way it does), for a lock file that
// names a live process truthfully.
function lockStartOf(pid: number): string | undefined {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
  const boot = Number(/^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))![1]);
  return Number.isFinite(ticks) ? new Date(boot * 1000 + ticks * 10).toISOString() : undefined;
}
