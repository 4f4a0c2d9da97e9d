// The line after a task: tokens (or that they are unknown) and time, on the terminal and in --json.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createMetricsCollector, type RunMetrics } from "simple-agent-loop";
import { createStyle } from "../../src/cli/ansi.ts";
import { jsonOutput } from "../../src/cli/json-output.ts";
import { terminalOutput } from "../../src/cli/terminal-output.ts";
import type { TaskResult } from "../../src/cli/task-output.ts";

// Metrics as the loop collects them: `calls` model calls reported their usage, the others did not.
function metrics(calls: { inputTokens: number; outputTokens: number }[], modelCalls: number): RunMetrics {
  const collector = createMetricsCollector();
  for (let iteration = 1; iteration <= modelCalls; iteration++) {
    collector.observe({ type: "turn-start", iteration });
    const usage = calls[iteration - 1];
    if (usage !== undefined) collector.observe({ type: "turn-end", iteration, usage });
  }
  return { ...collector.finish(), durationMs: 1500 };
}

function shown(result: TaskResult): string {
  const out = new PassThrough();
  let text = "";
  out.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  terminalOutput(out, new PassThrough(), createStyle(false)).finish(result);
  return text;
}

describe("the line after a task", () => {
  it("prints tokens as unknown when no model call reported them, as lower bounds when some did not", () => {
    expect(shown({ outcome: "done", metrics: metrics([{ inputTokens: 1200, outputTokens: 30 }], 1) })).toBe(
      "tokens 1,200 in · 30 out · 1.5s\n",
    );
    expect(shown({ outcome: "aborted", metrics: metrics([], 1) })).toContain("tokens unknown · 1.5s\n");
    expect(shown({ outcome: "aborted", metrics: metrics([{ inputTokens: 100, outputTokens: 20 }], 2) })).toContain(
      "tokens 100+ in · 20+ out (1 call not counted) · 1.5s\n",
    );
    expect(
      shown({ outcome: "done", metrics: metrics([{ inputTokens: 100, outputTokens: 20 }], 1), waitMs: 1000 }),
    ).toBe("tokens 100 in · 20 out · 0.5s (+1.0s waiting for you)\n");
  });

  it("says in --json whether the usage counts every model call", () => {
    const out = new PassThrough();
    let text = "";
    out.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    const output = jsonOutput(out, {});
    output.finish({ outcome: "aborted", metrics: metrics([], 1) });
    output.finish({ outcome: "done", answer: "a", metrics: metrics([{ inputTokens: 1, outputTokens: 2 }], 1) });
    const lines = text
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => line.usageComplete)).toStrictEqual([false, true]);
  });

  it("writes the events' durations in --json as whole milliseconds, and a tool's own data as it is", () => {
    const out = new PassThrough();
    let text = "";
    out.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    const output = jsonOutput(out, {});
    output.event({
      type: "tool-execution-end",
      id: "c",
      name: "probe",
      durationMs: 1.1829629999999725,
      waitMs: 0.04,
      result: { type: "tool_result", id: "c", output: { latencyMs: 1.5 } },
    });
    output.event({ type: "retry", iteration: 1, attempt: 1, delayMs: 999.6, error: "busy" });
    output.event({
      type: "run-end",
      outcome: "done",
      metrics: { ...metrics([{ inputTokens: 1, outputTokens: 2 }], 1), durationMs: 12.7, modelMs: 3.2 },
    });
    const [end, retry, runEnd] = text
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(end).toMatchObject({ durationMs: 1, result: { output: { latencyMs: 1.5 } } });
    expect(retry).toMatchObject({ delayMs: 1000 });
    expect(runEnd).toMatchObject({ metrics: { durationMs: 13, modelMs: 3, turns: [{ iteration: 1 }] } });
  });

  it("shows an error's control characters as visible escapes", () => {
    const errors = new PassThrough();
    let text = "";
    errors.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    terminalOutput(new PassThrough(), errors, createStyle(false)).finish({
      outcome: "error",
      error: new Error("bad\x1b[2J\x1b]0;owned\x07 gateway"),
    });
    expect(text).toBe("✗ Error: bad^[[2J^[]0;owned^G gateway\n");
  });
});
