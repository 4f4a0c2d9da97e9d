import { describe, expect, it } from "vitest";
import {
  agentLoop,
  initSession,
  sessionMetrics,
  type AgentEvent,
  type RunMetrics,
  type ToolResultMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { sleep } from "./helpers.ts";

const tenth = (value: number): boolean => Math.abs(value * 10 - Math.round(value * 10)) < 1e-9;

describe("time waiting for permission is told apart from time running", () => {
  it("tool-execution-end has waitMs (the beforeToolCall hook) and durationMs (the rest); results carry waitMs; metrics split it out", async () => {
    const events: AgentEvent[] = [];
    // Clock readings of the test's own, around the loop's: bounds that hold however slow the machine.
    let hookReturned = 0;
    let firstEndSeen = 0;
    const session = await agentLoop(
      scriptedModel([
        [
          { type: "tool_call", id: "a", name: "work", input: {} },
          { type: "tool_call", id: "b", name: "quick", input: {} },
        ],
        [{ role: "assistant", content: "done" }],
      ]),
      [],
      initSession("s", "u"),
      {
        parallel: false,
        toolHandlers: { work: () => sleep(30).then(() => "worked"), quick: () => "quick" },
        hooks: {
          beforeToolCall: async ({ call }) => {
            if (call.id !== "a") return;
            await sleep(150);
            hookReturned = performance.now();
          },
        },
        onEvent: (event) => {
          if (event.type === "tool-execution-end" && event.id === "a") firstEndSeen = performance.now();
          events.push(event);
        },
      },
    );
    const ends = events.filter((event) => event.type === "tool-execution-end");
    const first = ends.find((event) => event.id === "a")!;
    expect(first.waitMs).toBeGreaterThanOrEqual(140);
    expect(first.durationMs).toBeGreaterThanOrEqual(25);
    // The run time starts after the gate: it holds none of the wait.
    expect(first.durationMs).toBeLessThanOrEqual(firstEndSeen - hookReturned + 0.1);
    for (const end of ends) expect(tenth(end.durationMs) && tenth(end.waitMs)).toBe(true);

    const results = session.messages.filter(
      (message): message is ToolResultMessage => "type" in message && message.type === "tool_result",
    );
    expect(Number.isInteger(results[0]!.waitMs)).toBe(true);
    expect(results[0]!.waitMs).toBeGreaterThanOrEqual(140);
    // A wait under a millisecond is not recorded (the quick call's gate takes one only on a loaded machine).
    const quick = ends.find((event) => event.id === "b")!;
    if (quick.waitMs < 1) expect("waitMs" in results[1]!).toBe(false);
    else expect(Math.abs(results[1]!.waitMs! - quick.waitMs)).toBeLessThanOrEqual(0.6);

    const metrics = (events.at(-1) as { metrics: RunMetrics }).metrics;
    // The calls ran one after the other: the turn's wait is theirs, split out of its tool time.
    expect(Math.abs(metrics.waitMs - (first.waitMs + quick.waitMs))).toBeLessThanOrEqual(0.2);
    expect(metrics.turns[0]!.waitMs).toBe(metrics.waitMs);
    expect(metrics.toolMs).toBeGreaterThanOrEqual(25);
    expect(metrics.tools.work!.totalMs).toBe(first.durationMs);
    for (const value of [
      metrics.durationMs,
      metrics.modelMs,
      metrics.toolMs,
      metrics.waitMs,
      metrics.tools.work!.totalMs,
    ])
      expect(tenth(value)).toBe(true);

    // The same split from the saved session.
    const saved = sessionMetrics(session);
    expect(saved.waitMs).toBeGreaterThanOrEqual(140);
  });
});
