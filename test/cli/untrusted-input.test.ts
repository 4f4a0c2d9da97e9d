// Whatever the model or the workspace hands the file tools costs bounded time and memory: FIFOs
// and devices are refused instead of blocking, a pattern that backtracks forever is stopped (by
// time limit or abort) while the CLI stays responsive, and files are never read whole before
// their size is known.
import { execFileSync } from "node:child_process";
import { closeSync, ftruncateSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { executeToolCalls, type JsonObject, type ToolResultMessage } from "simple-agent-loop";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { grepTool } from "../../src/cli/tools/grep.ts";
import { createWorkspace } from "../../src/cli/tools/workspace.ts";
import { tempDirectory } from "./helpers.ts";
import { text, toolsIn } from "./tool-calls.ts";

let workspace: ReturnType<typeof tempDirectory>;
const file = (path: string): string => join(workspace.path, path);

beforeEach(() => {
  workspace = tempDirectory("untrusted-ws-");
});

afterEach(() => {
  workspace.remove();
});

describe("FIFOs and devices", () => {
  it("read refuses a FIFO at once instead of waiting for a writer", async () => {
    execFileSync("mkfifo", [file("pipe")]);
    const result = await toolsIn(workspace.path).call("read", { path: "pipe" });
    expect(result).toMatchObject({
      isError: true,
      output:
        "Error: pipe is a FIFO (named pipe), not a regular file; the file tools read and write regular files only",
    });
  }, 20_000);

  it("grep skips a FIFO with a note, in a directory or named alone", async () => {
    execFileSync("mkfifo", [file("pipe")]);
    writeFileSync(file("a.txt"), "needle\n");
    const { call } = toolsIn(workspace.path);
    expect(text(await call("grep", { pattern: "needle" }))).toBe(
      "a.txt:1: needle\n[skipped 1 file that is not regular (FIFO, socket or device): pipe]",
    );
    expect(text(await call("grep", { pattern: "needle", path: "pipe" }))).toBe(
      "No matches.\n[skipped 1 file that is not regular (FIFO, socket or device): pipe]",
    );
  }, 20_000);

  it("write refuses a FIFO without blocking, and writes nothing", async () => {
    execFileSync("mkfifo", [file("pipe")]);
    const result = await toolsIn(workspace.path).call("write", { path: "pipe", content: "x" });
    expect(result).toMatchObject({
      isError: true,
      output: expect.stringMatching(/^Error: pipe is (not a regular file|a FIFO)/),
    });
  }, 20_000);
});

describe("grep with a pattern that backtracks without end", () => {
  const call = (timeoutMs: number, input: JsonObject, signal?: AbortSignal): Promise<ToolResultMessage> =>
    executeToolCalls(
      [{ type: "tool_call", id: "call_1", name: "grep", input }],
      {},
      {
        tools: [grepTool(createWorkspace(workspace.path), { timeoutMs })],
        ...(signal === undefined ? {} : { signal }),
      },
    ).then((results) => results[0]!);

  beforeEach(() => {
    writeFileSync(file("evil.txt"), `ok\n${"a".repeat(64)}!\n`);
  });

  it("stops at its time limit with a clear error, the main thread responsive meanwhile", async () => {
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 50);
    const started = performance.now();
    const result = await call(1500, { pattern: "^(a+)+$" }).finally(() => clearInterval(ticker));
    expect(result).toMatchObject({
      isError: true,
      output: expect.stringMatching(/^Error: the pattern took longer than 1\.5 s to match and was stopped/),
    });
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(ticks).toBeGreaterThan(5);
    // The next search works: a stopped worker is replaced.
    expect(text(await call(5000, { pattern: "^ok$" }))).toBe("evil.txt:1: ok");
  }, 60_000);

  it("stops when the run is aborted", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 500);
    const started = performance.now();
    const result = await call(600_000, { pattern: "^(a+)+$" }, controller.signal);
    expect(result.isError).toBe(true);
    expect(performance.now() - started).toBeLessThan(20_000);
  }, 60_000);
});

describe("large files", () => {
  it("grep skips a file over its limit with a note, without reading it (a sparse 300 MB file)", async () => {
    writeFileSync(file("small.txt"), "needle\n");
    const descriptor = openSync(file("huge.log"), "w");
    ftruncateSync(descriptor, 300_000_000);
    closeSync(descriptor);
    const before = process.memoryUsage().rss;
    const output = text(await toolsIn(workspace.path).call("grep", { pattern: "needle" }));
    expect(output).toBe(
      "small.txt:1: needle\n[skipped 1 file larger than 2000000 bytes (search them with bash: grep -n): huge.log]",
    );
    expect(process.memoryUsage().rss - before).toBeLessThan(150_000_000);
  }, 60_000);

  it("read shows the window asked for from a large file, with its line count", async () => {
    const lines = Array.from({ length: 200_000 }, (_, index) => `line ${index + 1} ${"x".repeat(40)}`);
    writeFileSync(file("big.txt"), lines.join("\n") + "\n");
    const output = text(await toolsIn(workspace.path).call("read", { path: "big.txt", offset: 150_000, limit: 2 }));
    expect(output).toBe(
      `150000\t${lines[149_999]}\n150001\t${lines[150_000]}\n\n[lines 150000-150001 of 200000; read on with offset=150002]`,
    );
  }, 60_000);

  it("read cuts a line of several megabytes without keeping it whole", async () => {
    writeFileSync(file("one-line.txt"), `${"é".repeat(3_000_000)}\nsecond\r\n`);
    const output = text(await toolsIn(workspace.path).call("read", { path: "one-line.txt" }));
    expect(output).toBe(`     1\t${"é".repeat(2000)}… [line cut at 2000 characters]\n     2\tsecond`);
  }, 60_000);
});
