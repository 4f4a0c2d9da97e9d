import { describe, expect, it } from "vitest";
import {
  agentLoop,
  ContextOverflowError,
  initSession,
  isProviderError,
  ProviderError,
  sessionMetrics,
  withFallback,
  type AgentEvent,
  type InvokeModel,
  type ModelStreamEvent,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { withoutTs } from "./helpers.ts";

const overloaded = (): ProviderError =>
  new ProviderError("overloaded", { provider: "test", status: 529, retryable: true });

function failing(error: () => unknown): InvokeModel & { count: number } {
  const model = Object.assign(
    () => {
      model.count++;
      throw error();
    },
    { count: 0 },
  );
  return model;
}

describe("withFallback", () => {
  it("moves a call that failed with a retryable error to the next model, says so, and skips the failed one while it cools down", async () => {
    const first = failing(overloaded);
    const second = scriptedModel([
      [{ role: "assistant", content: "from the second", model: "second-model" }],
      [{ role: "assistant", content: "again the second", model: "second-model" }],
    ]);
    const invoke = withFallback([first, second], { cooldownMs: 60_000 });
    const events: AgentEvent[] = [];
    const session = await agentLoop(invoke, [], initSession("s", "u"), { onEvent: (event) => events.push(event) });
    expect(withoutTs(session).at(-1)).toStrictEqual({
      role: "assistant",
      content: "from the second",
      model: "second-model",
    });
    expect(events.filter((event) => event.type === "fallback")).toStrictEqual([
      { type: "fallback", from: 0, to: 1, error: "overloaded", errorType: "ProviderError" },
    ]);
    // Nothing of the failed call entered the session; no retry was needed.
    expect(events.some((event) => event.type === "retry")).toBe(false);
    session.messages.push({ role: "user", content: "more" });
    await agentLoop(invoke, [], session);
    expect(first.count).toBe(1);
    expect(second.callCount).toBe(2);
  });

  it("a ContextOverflowError falls back too; an error that is not retryable is thrown as it is", async () => {
    const overflow = failing(
      () => new ContextOverflowError("too long", { provider: "test", status: 400, code: "context_length_exceeded" }),
    );
    const session = await agentLoop(
      withFallback([overflow, scriptedModel([[{ role: "assistant", content: "bigger window" }]])]),
      [],
      initSession("s", "u"),
    );
    expect(session.messages.at(-1)).toMatchObject({ content: "bigger window" });

    const refused = failing(() => new ProviderError("bad request", { provider: "test", status: 400 }));
    const never = scriptedModel([]);
    const error = await agentLoop(withFallback([refused, never]), [], initSession("s", "u")).catch(
      (thrown: unknown) => thrown,
    );
    expect(isProviderError(error) && error.message).toBe("bad request");
    expect(never.callCount).toBe(0);
  });

  it("shouldFallBack decides which failures move on", async () => {
    const first = failing(() => new Error("custom"));
    const session = await agentLoop(
      withFallback([first, scriptedModel([[{ role: "assistant", content: "ok" }]])], {
        shouldFallBack: (error) => error instanceof Error && error.message === "custom",
      }),
      [],
      initSession("s", "u"),
    );
    expect(session.messages.at(-1)).toMatchObject({ content: "ok" });
  });

  it("a stream that fails after it began is discarded whole: the loop's retry goes to the next model, and the session holds one answer", async () => {
    async function* halfThenFail(): AsyncGenerator<ModelStreamEvent> {
      yield { type: "text-delta", delta: "half" };
      yield { type: "message", message: { role: "assistant", content: "half an answer" } };
      throw overloaded();
    }
    const second = scriptedModel([[{ role: "assistant", content: "whole answer" }]], { stream: true });
    const events: AgentEvent[] = [];
    const session = await agentLoop(withFallback([() => halfThenFail(), second]), [], initSession("s", "u"), {
      retry: { initialDelayMs: 0 },
      onEvent: (event) => events.push(event),
    });
    expect(withoutTs(session).slice(2)).toStrictEqual([{ role: "assistant", content: "whole answer" }]);
    const kinds = events
      .filter((event) => event.type === "retry" || event.type === "fallback")
      .map((event) => event.type);
    expect(kinds).toStrictEqual(["retry", "fallback"]);
  });

  it("honours the failed model's retry-after when it is longer than the cooldown", async () => {
    const first = failing(
      () => new ProviderError("slow down", { provider: "test", status: 429, retryable: true, retryAfterMs: 600_000 }),
    );
    const second = scriptedModel([[{ role: "assistant", content: "a" }], [{ role: "assistant", content: "b" }]]);
    const invoke = withFallback([first, second], { cooldownMs: 0 });
    const session = await agentLoop(invoke, [], initSession("s", "u"));
    session.messages.push({ role: "user", content: "more" });
    await agentLoop(invoke, [], session);
    expect(first.count).toBe(1);
  });

  it("refuses an empty list and a cooldown that is not a number", () => {
    expect(() => withFallback([])).toThrow(/non-empty array/);
    expect(() => withFallback([scriptedModel([])], { cooldownMs: -1 })).toThrow(/cooldownMs/);
  });
});

describe("metrics when withFallback switches models", () => {
  it("run-end metrics and sessionMetrics count the calls per model that answered, and price each at its own rates", async () => {
    const answer = (model: string, content: string): ModelStreamEvent[] => [
      {
        type: "message",
        message: { role: "assistant", content, model, usage: { inputTokens: 1_000_000, outputTokens: 0 } },
      },
    ];
    // The first model answers the tool call, then fails (overloaded) while the second takes the final answer.
    let firstCalls = 0;
    const first: InvokeModel = () => {
      firstCalls++;
      if (firstCalls > 1) throw overloaded();
      return [
        { type: "tool_call", id: "c1", name: "work", input: {} },
        { role: "assistant", content: "", model: "big", usage: { inputTokens: 1_000_000, outputTokens: 0 } },
      ];
    };
    const second: InvokeModel = async function* () {
      yield* answer("small", "done by the small one");
    };
    const prices = { big: { inputPerMTok: 3, outputPerMTok: 15 }, small: { inputPerMTok: 1, outputPerMTok: 5 } };
    const events: AgentEvent[] = [];
    const session = await agentLoop(withFallback([first, second], { cooldownMs: 60_000 }), [], initSession("s", "u"), {
      toolHandlers: { work: () => "ok" },
      prices,
      onEvent: (event) => events.push(event),
    });
    const end = events.at(-1) as Extract<AgentEvent, { type: "run-end" }>;
    expect(events.filter((event) => event.type === "fallback")).toHaveLength(1);
    expect(end.metrics?.modelCalls).toBe(2);
    expect(end.metrics?.costByModel).toStrictEqual({ big: { calls: 1, costUsd: 3 }, small: { calls: 1, costUsd: 1 } });
    expect(end.metrics?.turns.map((turn) => [turn.model, turn.costUsd])).toStrictEqual([
      ["big", 3],
      ["small", 1],
    ]);
    expect(end.metrics?.costUsd).toBe(4);
    expect(sessionMetrics(session, { prices }).costByModel).toStrictEqual(end.metrics?.costByModel);
    // Without prices the calls per model are still counted (no cost is claimed).
    const unpriced = sessionMetrics(session);
    expect(unpriced.costByModel).toStrictEqual({ big: { calls: 1, costUsd: 0 }, small: { calls: 1, costUsd: 0 } });
    expect(unpriced.costUsd).toBeUndefined();
  });
});
