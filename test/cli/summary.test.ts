// The one line shown for each answered tool call.
import { describe, expect, it } from "vitest";
import { describeTarget, summarizeToolCall } from "../../src/cli/summary.ts";

describe("summarizeToolCall", () => {
  it("counts every line of a bash output that was cut in the middle, not only the lines kept", () => {
    const output =
      "1\n2\n[… 3000 bytes (997 lines) of output cut here; 3004 bytes in all. Redirect to a file and read or grep it to see more …]\n1000\n";
    const result = { type: "tool_result", id: "call_1", output } as const;
    expect(summarizeToolCall("bash", { command: "seq 1000" }, result)).toStrictEqual({
      ok: true,
      text: "✓ bash seq 1000 (1000 lines of output, the middle cut)",
    });
    expect(summarizeToolCall("bash", { command: "seq 2" }, { ...result, output: "1\n2\n" })).toStrictEqual({
      ok: true,
      text: "✓ bash seq 2 (2 lines of output)",
    });
  });
});

describe("summarizeToolCall of read", () => {
  it("names an image's or a PDF's media type and size, and counts a text file's lines", () => {
    const result = (output: string) => ({ type: "tool_result", id: "call_1", output }) as const;
    expect(summarizeToolCall("read", { path: "shot.png" }, result("shot.png: image/png, 48 KB")).text).toBe(
      "✓ read shot.png (image/png, 48 KB)",
    );
    expect(summarizeToolCall("read", { path: "a.pdf" }, result("a.pdf: application/pdf, 1.2 MB")).text).toBe(
      "✓ read a.pdf (application/pdf, 1.2 MB)",
    );
    expect(summarizeToolCall("read", { path: "a.txt" }, result("     1\tx: image/png, 4 B")).text).toBe(
      "✓ read a.txt (1 line)",
    );
  });
});

describe("describeTarget", () => {
  it("shows every line of a command, so a second command never hides behind the first", () => {
    expect(describeTarget("bash", { command: "echo hi\ntouch PWNED\n" })).toBe(" echo hi ↵ touch PWNED (2 lines)");
    expect(describeTarget("bash", { command: "\n\ntouch PWNED" })).toBe("  ↵  ↵ touch PWNED (3 lines)");
    const long = describeTarget("bash", { command: `echo ${"a".repeat(100)}\nrm -rf ~` });
    expect(long).toMatch(/… \(2 lines\)$/);
  });

  it("makes control characters of paths and commands visible", () => {
    expect(describeTarget("write", { path: "a\u202Eb\x1b[2J" })).toBe(" a<U+202E>b^[[2J");
    expect(describeTarget("bash", { command: "touch x #\b\b\bls" })).toBe(" touch x #^H^H^Hls");
    expect(
      summarizeToolCall(
        "x\x1b]0;t\x07",
        {},
        { type: "tool_result", id: "1", output: "Error: bad\rworse", isError: true },
      ).text,
    ).toBe("✗ x^[]0;t^G: bad^Mworse");
  });
});
