import { describe, expect, it } from "vitest";
import { contextUsage } from "simple-agent-loop";
import { createStyle } from "../../src/cli/ansi.ts";
import { formatContextTable } from "../../src/cli/context-table.ts";

describe("/context", () => {
  it("prints one row per part with tokens, share and a bar, the largest tools under their part, and the total", () => {
    const usage = contextUsage(
      {
        messages: [
          { role: "system", content: "s".repeat(400) },
          { role: "user", content: "u".repeat(1200) },
          { type: "tool_call", id: "c", name: "read\u001b[2J", input: {} },
          { type: "tool_result", id: "c", output: "r".repeat(2400) },
          { role: "assistant", content: "ok", usage: { inputTokens: 1234, outputTokens: 1 } },
        ],
      },
      {},
    );
    const table = formatContextTable(usage, createStyle(false), 200_000);
    const lines = table.trimEnd().split("\n");
    expect(lines.map((line) => line.split(/\s+/)[0])).toStrictEqual([
      "system",
      "tools",
      "user",
      "assistant",
      "thinking",
      "tool_calls",
      "",
      "tool_results",
      "",
      "cleared",
      "total",
      "last",
    ]);
    const toolResults = lines.find((line) => line.startsWith("tool_results"))!;
    // 2,400 characters of output in about 4,100 in all: the largest share, and the longest bar.
    expect(toolResults).toMatch(/^tool_results\s+6\d\d\s+(5|6)\d% █{13,15}·+$/);
    // A name from the model is shown escaped, never as a terminal control sequence.
    expect(table).not.toContain("\u001b");
    expect(lines.at(-2)).toMatch(/^total\s+[\d,]+ tokens \(estimated\) of 200,000 \(\d+%\)$/);
    expect(lines.at(-1)).toMatch(/^last call\s+1,234 input tokens \(reported\)$/);
  });
});
