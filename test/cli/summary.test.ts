// The one line shown for each answered tool call.
import { describe, expect, it } from "vitest";
import { summarizeToolCall } from "../../src/cli/summary.ts";

describe("summarizeToolCall", () => {
  it("counts every line of a bash output that was cut in the middle, not only the lines kept", () => {
    const output = "1\n2\n[… 3000 bytes (997 lines) of output cut here; 3004 bytes in all. Redirect to a file and read or grep it to see more …]\n1000\n";
    const result = { type: "tool_result", id: "call_1", output } as const;
    expect(summarizeToolCall("bash", { command: "seq 1000" }, result)).toStrictEqual({ ok: true, text: "✓ bash seq 1000 (1000 lines of output, the middle cut)" });
    expect(summarizeToolCall("bash", { command: "seq 2" }, { ...result, output: "1\n2\n" })).toStrictEqual({ ok: true, text: "✓ bash seq 2 (2 lines of output)" });
  });
});
