import { describe, expect, it } from "vitest";
import { agentLoop, initSession, sessionMetrics, type AgentEvent, type RunMetrics, type ToolResultMessage } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { sleep } from "./helpers.ts";

const tenth = (value: number): boolean => Math.abs(value * 10 - Math.round(value * 10)) < 1e-9;

describe("time waiting for permission is told apart from time running", () => {
  it("tool-execution-end has waitMs (the beforeToolCall hook) and durationMs (the rest); results carry waitMs; metrics split it out", async () => {
    const events: AgentEvent[] = [];
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
        hooks: { beforeToolCall: async ({ call }) => (call.id === "a" ? sleep(150) : undefined) },
        onEvent: (event) => events.push(event),
      },
    );
    const ends = events.filter((event) => event.type === "tool-execution-end");
    const first = ends.find((event) => event.id === "a")!;
    expect(first.waitMs).toBeGreaterThanOrEqual(140);
    expect(first.durationMs).toBeGreaterThanOrEqual(25);
    expect(first.durationMs).toBeLessThan(first.waitMs);
    for (const end of ends) expect(tenth(end.durationMs) && tenth(end.waitMs)).toBe(true);

    const results = session.messages.filter((message): message is ToolResultMessage => "type" in message && message.type === "tool_result");
    expect(Number.isInteger(results[0]!.waitMs)).toBe(true);
    expect(results[0]!.waitMs).toBeGreaterThanOrEqual(140);
    // A wait under a millisecond is not recorded.
    expect("waitMs" in results[1]!).toBe(false);

    const metrics = (events.at(-1) as { metrics: RunMetrics }).metrics;
    expect(metrics.waitMs).toBeGreaterThanOrEqual(140);
    expect(metrics.toolMs).toBeLessThan(metrics.waitMs);
    expect(metrics.turns[0]!.waitMs).toBeGreaterThanOrEqual(140);
    expect(metrics.tools.work!.totalMs).toBeLessThan(140);
    for (const value of [metrics.durationMs, metrics.modelMs, metrics.toolMs, metrics.waitMs, metrics.tools.work!.totalMs]) expect(tenth(value)).toBe(true);

    // The same split from the saved session.
    const saved = sessionMetrics(session);
    expect(saved.waitMs).toBeGreaterThanOrEqual(140);
  });
});
