import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../src/loop/events.ts";
import { createRunEvents } from "../src/loop/run-events.ts";
import type { ModelMessage } from "../src/session.ts";

// One turn: a tool call, its execution and result, then the run's end.
function playTurn(events: ReturnType<typeof createRunEvents>): void {
  const call: ModelMessage = {
    type: "tool_call",
    id: "c1",
    name: "add",
    input: { a: 1 },
    usage: { inputTokens: 3, outputTokens: 2 },
  };
  events.emit({ type: "run-start" });
  events.turnStart(1);
  events.message(call);
  const result = { type: "tool_result", id: "c1", output: 2 } as const;
  events.emit({ type: "tool-execution-end", id: "c1", name: "add", result, durationMs: 1, waitMs: 0 });
  events.message(result);
  events.turnEnd(1, call);
  events.emit({ type: "run-end", outcome: "done" });
}

describe("createRunEvents", () => {
  it("hands nobody the turn's events when nobody listens, and still sums up the run", () => {
    const heard: AgentEvent[] = [];
    playTurn(
      createRunEvents(
        (event) => heard.push(event),
        () => false,
      ),
    );
    expect(heard.map((event) => event.type)).toStrictEqual(["run-end"]);
    const end = heard[0]!;
    if (end.type !== "run-end") throw new Error("expected run-end");
    expect(end.metrics?.modelCalls).toBe(1);
    expect(end.metrics?.usage.inputTokens).toBe(3);
    expect(end.metrics?.tools).toStrictEqual({ add: { calls: 1, errors: 0, totalMs: 1 } });
    expect(
      end.metrics?.turns.map(({ iteration, toolCalls, usage }) => ({ iteration, toolCalls, usage })),
    ).toStrictEqual([{ iteration: 1, toolCalls: 1, usage: { inputTokens: 3, outputTokens: 2 } }]);
  });

  it("hands a listener every event, in order, with the same metrics", () => {
    const heard: AgentEvent[] = [];
    playTurn(
      createRunEvents(
        (event) => heard.push(event),
        () => true,
      ),
    );
    expect(heard.map((event) => event.type)).toStrictEqual([
      "run-start",
      "turn-start",
      "message",
      "tool-execution-end",
      "message",
      "turn-end",
      "run-end",
    ]);
    expect(heard[5]).toStrictEqual({ type: "turn-end", iteration: 1, usage: { inputTokens: 3, outputTokens: 2 } });
    const end = heard[6]!;
    if (end.type !== "run-end") throw new Error("expected run-end");
    expect(end.metrics?.tools).toStrictEqual({ add: { calls: 1, errors: 0, totalMs: 1 } });
  });
});
