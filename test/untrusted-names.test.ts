import { afterEach, describe, expect, it } from "vitest";
import {
  agentLoop,
  executeToolCalls,
  initSession,
  sessionMetrics,
  tool,
  type AgentEvent,
  type ModelMessage,
  type RunMetrics,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";

const names = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"];

afterEach(() => {
  // Nothing a model sends may write to Object.prototype.
  expect(Object.keys(Object.prototype)).toStrictEqual([]);
  expect(({} as Record<string, unknown>).calls).toBeUndefined();
});

describe("names from a model are never keys of plain objects", () => {
  for (const name of names) {
    it(`a call of "${name}" is an unknown tool, and metrics count it as its own entry`, async () => {
      const turn: ModelMessage[] = [{ type: "tool_call", id: "a", name, input: {} }];
      let metrics: RunMetrics | undefined;
      const session = await agentLoop(
        scriptedModel([turn, [{ role: "assistant", content: "done" }]]),
        [],
        initSession("s", "u"),
        {
          toolHandlers: { work: () => "ok" },
          onEvent: (event: AgentEvent) => {
            if (event.type === "run-end") metrics = event.metrics;
          },
        },
      );
      const result = session.messages.find((message) => "type" in message && message.type === "tool_result");
      expect(result).toMatchObject({
        isError: true,
        output: expect.stringContaining(`unknown tool "${name}"`) as unknown,
      });
      expect(Object.keys(metrics!.tools)).toStrictEqual([name]);
      expect(Object.getOwnPropertyDescriptor(metrics!.tools, name)?.value).toMatchObject({ calls: 1, errors: 1 });
      const fromSession = sessionMetrics(session);
      expect(Object.getOwnPropertyDescriptor(fromSession.tools, name)?.value).toMatchObject({ calls: 1, errors: 1 });
      const [direct] = await executeToolCalls([{ type: "tool_call", id: "b", name, input: {} }], { work: () => "ok" });
      expect(direct).toMatchObject({ isError: true });
    });
  }

  it("a schema property typed with a prototype name is not a type check that always passes", async () => {
    const strict = tool({
      name: "strict",
      description: "d",
      inputSchema: { type: "object", properties: { n: { type: "constructor" } }, required: ["n"] },
      handler: () => "ran",
    });
    const [result] = await executeToolCalls(
      [{ type: "tool_call", id: "c", name: "strict", input: { n: 1 } }],
      {},
      { tools: [strict] },
    );
    expect(result).toMatchObject({ isError: true });
  });
});
