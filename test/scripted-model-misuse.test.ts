import { describe, expect, it } from "vitest";
import { isAgentError, maxTimerDelay } from "simple-agent-loop";
import { scriptedModel, type ScriptedTurn } from "simple-agent-loop/testing";

describe("scriptedModel fails loudly on a malformed script", () => {
  const malformed: [string, unknown][] = [
    ["a script that is not an array", { role: "assistant", content: "x" }],
    ["a user message as a model turn", [[{ role: "user", content: "hi" }]]],
    ["a message without role or type", [{ content: "hi" }]],
    ["a tool call without an id", [[{ type: "tool_call", name: "t", input: {} }]]],
    ["a tool call whose input is an array", [[{ type: "tool_call", id: "a", name: "t", input: [] }]]],
    ["a misspelled option", [{ messsages: [{ role: "assistant", content: "x" }] }]],
    ["a turn that is a number", [42]],
    ["a delay a timer cannot hold", [{ delay: maxTimerDelay + 1, messages: [] }]],
    ["an infinite delay", [{ delay: Number.POSITIVE_INFINITY, messages: [] }]],
    ["a negative delay", [{ delayMs: -1, messages: [] }]],
    ["a NaN delay", [{ delay: Number.NaN, messages: [] }]],
    ["messages that are not an array", [{ messages: "hello" }]],
  ];
  for (const [label, script] of malformed) {
    it(`${label}: an AgentError at once, naming the turn`, () => {
      let thrown: unknown;
      try {
        scriptedModel(script as readonly ScriptedTurn[]);
      } catch (error) {
        thrown = error;
      }
      expect(isAgentError(thrown)).toBe(true);
      expect((thrown as Error).message).toMatch(/^scriptedModel: /);
    });
  }

  it("a well-formed script is accepted as before", () => {
    const turns: ScriptedTurn[] = [
      [{ role: "assistant", content: "a" }],
      { role: "assistant", content: "b" },
      () => [],
      { delay: 5, messages: [{ type: "tool_call", id: "c", name: "t", input: {} }], stream: true },
      { error: new Error("fail") },
    ];
    expect(() => scriptedModel(turns)).not.toThrow();
  });
});
