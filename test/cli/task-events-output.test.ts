// Background tasks on the terminal: started, progress in words, settled; what a tool says never acts on the terminal.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "simple-agent-loop";
import { createStyle } from "../../src/cli/ansi.ts";
import { terminalOutput } from "../../src/cli/terminal-output.ts";

function shown(events: AgentEvent[]): string {
  const out = new PassThrough();
  let text = "";
  out.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  const output = terminalOutput(out, new PassThrough(), createStyle(false));
  for (const event of events) output.event(event);
  return text;
}

describe("background tasks on the terminal", () => {
  it("shows a task's start, its progress in words and its settling, one line each", () => {
    const id = "task_1";
    const text = shown([
      { type: "task-start", id, callId: "c1", name: "build" },
      { type: "task-update", id, callId: "c1", name: "build", progress: "compiled 3 of 9" },
      { type: "task-update", id, callId: "c1", name: "build", progress: { message: "linking" } },
      // A subagent's own events are not repeated on the terminal.
      { type: "task-update", id, callId: "c1", name: "build", progress: { type: "turn-start", iteration: 1 } },
      { type: "task-settled", id, status: "completed", durationMs: 12 },
    ]);
    expect(text).toBe(
      "⧗ build runs in the background (task_1)\n" +
        "⧗ build: compiled 3 of 9\n" +
        "⧗ build: linking\n" +
        "⧗ background task task_1 completed\n",
    );
  });

  it("a tool's progress text cannot act on the terminal", () => {
    const text = shown([
      { type: "task-update", id: "t", callId: "c1", name: "build", progress: "\u001b]0;owned\u0007\u001b[2Jcleared" },
    ]);
    expect(text).not.toContain("\u001b");
    expect(text).not.toContain("\u0007");
    expect(text).toContain("cleared");
  });
});
