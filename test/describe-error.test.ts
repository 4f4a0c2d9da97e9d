import { describe, expect, it } from "vitest";
import {
  agentLoop,
  describeError,
  initSession,
  maxErrorLength,
  type AgentEvent,
  type ModelMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

// Things a handler or a hook may throw whose formatting itself would throw.
function hostileValues(): [string, unknown][] {
  const bare = Object.create(null) as Record<string, unknown>;
  bare.code = 10n;
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const getter = new Error("x");
  Object.defineProperty(getter, "message", {
    get() {
      throw new Error("no message for you");
    },
  });
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  return [
    ["an object without prototype holding a BigInt", bare],
    ["a revoked proxy", revoked.proxy],
    ["an Error whose message getter throws", getter],
    ["a circular object", circular],
    ["a BigInt", 5n],
    ["a symbol", Symbol("s")],
    ["undefined", undefined],
  ];
}

describe("describeError", () => {
  it("never throws and always gives a string", () => {
    for (const [, value] of hostileValues()) expect(typeof describeError(value)).toBe("string");
    expect(describeError(new Error("plain"))).toBe("plain");
    expect(describeError("text")).toBe("text");
    expect(describeError({ code: 1n })).toBe('{"code":"1"}');
  });

  it("bounds the text, saying how much was cut", () => {
    const text = describeError(new Error("y".repeat(100_000)));
    expect(text.length).toBeLessThan(maxErrorLength + 50);
    expect(text).toMatch(/… \(96000 more characters\)$/);
  });

  for (const [label, thrown] of hostileValues()) {
    it(`a handler, a tool hook and a model hook throwing ${label}: every call answered, the run ends cleanly`, async () => {
      const turn: ModelMessage[] = [
        { type: "tool_call", id: "a", name: "work", input: {} },
        { type: "tool_call", id: "b", name: "other", input: {} },
      ];
      const events: AgentEvent[] = [];
      const session = await agentLoop(
        scriptedModel([turn, [{ role: "assistant", content: "done" }]]),
        [],
        initSession("s", "u"),
        {
          toolHandlers: {
            work: () => {
              throw thrown;
            },
            other: () => "ok",
          },
          hooks: {
            afterToolCall: ({ call }) => {
              if (call.id === "b") throw thrown;
            },
          },
          onEvent: (event) => events.push(event),
        },
      );
      expectEveryCallAnsweredOnce(session);
      const results = session.messages.filter((message) => "type" in message && message.type === "tool_result");
      expect(results.map((result) => "isError" in result && result.isError)).toStrictEqual([true, true]);
      expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "done" });

      const failing = agentLoop(scriptedModel([[{ role: "assistant", content: "x" }]]), [], initSession("s", "u"), {
        hooks: {
          beforeModelCall: () => {
            throw thrown;
          },
        },
        onEvent: (event) => events.push(event),
      });
      // Compared by identity: a revoked proxy cannot even be inspected by an assertion.
      expect(
        await failing.then(
          () => "resolved",
          (error: unknown) => error === thrown,
        ),
      ).toBe(true);
      expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "error" });
    });
  }
});
