import { describe, expect, it } from "vitest";
import { agentLoop, initSession, sessionMetrics, type AgentEvent, type RunMetrics } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { sleep } from "./helpers.ts";

describe("metrics", () => {
  it("run-end carries model calls, tokens by kind, model and tool time, per tool and per turn", async () => {
    const model = scriptedModel([
      {
        delay: 30,
        messages: [
          { type: "tool_call", id: "a", name: "wait", input: {} },
          {
            type: "tool_call",
            id: "b",
            name: "fail",
            input: {},
            usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 80 },
          },
        ],
      },
      [{ role: "assistant", content: "done", usage: { inputTokens: 150, outputTokens: 5, reasoningTokens: 2 } }],
    ]);
    let metrics: RunMetrics | undefined;
    await agentLoop(model, [], initSession("s", "u"), {
      toolHandlers: {
        wait: () => sleep(40).then(() => "ok"),
        fail: () => {
          throw new Error("nope");
        },
      },
      onEvent: (event: AgentEvent) => {
        if (event.type === "run-end") metrics = event.metrics;
      },
    });
    expect(metrics).toMatchObject({
      modelCalls: 2,
      usage: { inputTokens: 250, outputTokens: 25, cacheReadTokens: 80, cacheWriteTokens: 0, reasoningTokens: 2 },
      tools: { wait: { calls: 1, errors: 0 }, fail: { calls: 1, errors: 1 } },
    });
    expect(metrics!.modelMs).toBeGreaterThanOrEqual(25);
    expect(metrics!.toolMs).toBeGreaterThanOrEqual(35);
    expect(metrics!.tools.wait!.totalMs).toBeGreaterThanOrEqual(35);
    expect(metrics!.durationMs).toBeGreaterThanOrEqual(metrics!.modelMs + metrics!.toolMs - 1);
    expect(metrics!.turns.map((turn) => [turn.iteration, turn.toolCalls])).toStrictEqual([
      [1, 2],
      [2, 0],
    ]);
  });

  it("sessionMetrics computes the same counts from a saved session", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "a", name: "echo", input: {}, usage: { inputTokens: 10, outputTokens: 3 } }],
      [{ type: "tool_call", id: "b", name: "echo", input: {}, usage: { inputTokens: 20, outputTokens: 3 } }],
      [{ role: "assistant", content: "done", usage: { inputTokens: 30, outputTokens: 1 } }],
    ]);
    const session = await agentLoop(model, [], initSession("s", "u"), { toolHandlers: { echo: () => "x" } });
    const saved = JSON.parse(JSON.stringify(session)) as typeof session;
    expect(sessionMetrics(saved)).toMatchObject({
      modelCalls: 3,
      usage: { inputTokens: 60, outputTokens: 7 },
      tools: { echo: { calls: 2, errors: 0 } },
      turns: [{ toolCalls: 1 }, { toolCalls: 1 }, { toolCalls: 0 }],
    });
  });
});

it("tools of a discarded (retried) attempt are not counted", async () => {
  let attempt = 0;
  const stream = async function* () {
    attempt++;
    yield { type: "message" as const, message: { type: "tool_call" as const, id: "t", name: "echo", input: {} } };
    await sleep(10);
    if (attempt === 1) throw Object.assign(new Error("cut"), { retryable: true, retryAfterMs: 1 });
    yield { type: "response-end" as const, stopReason: "tool_use" as const };
  };
  let metrics: RunMetrics | undefined;
  let turn = 0;
  await agentLoop(
    () => (turn++ < 2 ? stream() : [{ role: "assistant" as const, content: "done" }]),
    [],
    initSession("s", "u"),
    { toolHandlers: { echo: () => "x" }, onEvent: (event) => event.type === "run-end" && (metrics = event.metrics) },
  );
  expect(metrics?.tools).toStrictEqual({ echo: { calls: 1, errors: 0, totalMs: expect.any(Number) } });
});
