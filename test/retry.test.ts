import { describe, expect, it } from "vitest";
import {
  agentLoop,
  ContextOverflowError,
  initSession,
  isContextOverflowError,
  isProviderError,
  ProviderError,
  response,
  retryDelay,
  type AgentEvent,
  type ModelStreamEvent,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { withoutTs } from "./helpers.ts";

const overloaded = (retryAfterMs?: number) =>
  new ProviderError("Overloaded", {
    provider: "test",
    status: 529,
    retryable: true,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });

describe("retries of model calls", () => {
  it("repeats a call that failed with a retryable error, honouring retryAfterMs, and reports each retry", async () => {
    const model = scriptedModel([
      { error: overloaded(5) },
      { error: overloaded(5) },
      [{ role: "assistant", content: "finally" }],
    ]);
    const events: AgentEvent[] = [];
    const session = await agentLoop(model, [], initSession("s", "u"), { onEvent: (event) => events.push(event) });
    expect(response(session)?.content).toBe("finally");
    expect(events.filter((event) => event.type === "retry")).toStrictEqual([
      { type: "retry", iteration: 1, attempt: 1, delayMs: 5, error: "Overloaded", errorType: "ProviderError" },
      { type: "retry", iteration: 1, attempt: 2, delayMs: 5, error: "Overloaded", errorType: "ProviderError" },
    ]);
  });

  it("gives up after maxRetries and throws the last error; never retries a non-retryable error", async () => {
    const failing = scriptedModel([{ error: overloaded(1) }, { error: overloaded(1) }]);
    await expect(agentLoop(failing, [], initSession("s", "u"), { retry: { maxRetries: 1 } })).rejects.toThrow(
      "Overloaded",
    );
    expect(failing.callCount).toBe(2);

    const badRequest = new ProviderError("invalid model", { provider: "test", status: 400 });
    const once = scriptedModel([{ error: badRequest }, [{ role: "assistant", content: "unreachable" }]]);
    await expect(agentLoop(once, [], initSession("s", "u"))).rejects.toBe(badRequest);
    expect(once.callCount).toBe(1);

    const off = scriptedModel([{ error: overloaded(1) }]);
    await expect(agentLoop(off, [], initSession("s", "u"), { retry: false })).rejects.toThrow("Overloaded");
  });

  it("a stream that fails midway is discarded whole and the call repeated: no duplicated or half-written messages", async () => {
    let attempt = 0;
    async function* flaky(): AsyncGenerator<ModelStreamEvent> {
      attempt++;
      yield { type: "message", message: { role: "assistant", content: "Part one" } };
      if (attempt === 1)
        throw new ProviderError("stream reset", { provider: "test", retryable: true, retryAfterMs: 1 });
      yield { type: "message", message: { role: "assistant", content: "Part two" } };
      yield { type: "response-end", stopReason: "end_turn" };
    }
    const session = await agentLoop(() => flaky(), [], initSession("s", "u"));
    expect(withoutTs(session).slice(2)).toStrictEqual([
      { role: "assistant", content: "Part one" },
      { role: "assistant", content: "Part two", stopReason: "end_turn" },
    ]);
  });

  it("an abort during the backoff ends the run as aborted", async () => {
    const controller = new AbortController();
    const model = scriptedModel([{ error: overloaded(60_000) }]);
    setTimeout(() => controller.abort(), 20);
    const session = await agentLoop(model, [], initSession("s", "u"), { signal: controller.signal });
    expect(response(session)).toMatchObject({ stopReason: "aborted" });
  });

  it("retryDelay backs off exponentially with jitter and caps the wait", () => {
    const error = overloaded();
    for (let attempt = 1; attempt <= 4; attempt++) {
      const ceiling = 100 * 2 ** (attempt - 1);
      const wait = retryDelay(error, attempt, { maxRetries: 4, initialDelayMs: 100 })!;
      expect(wait).toBeGreaterThanOrEqual(ceiling / 2);
      expect(wait).toBeLessThanOrEqual(ceiling);
    }
    expect(retryDelay(error, 5, { maxRetries: 4 })).toBeUndefined();
    expect(retryDelay(overloaded(120_000), 1, { maxDelayMs: 1000 })).toBe(1000);
    expect(retryDelay(new Error("plain"), 1)).toBeUndefined();
  });

  it("ContextOverflowError is a ProviderError, recognisable across package copies, and not retryable", () => {
    const error = new ContextOverflowError("prompt is too long", { provider: "anthropic", status: 400 });
    expect(isProviderError(error)).toBe(true);
    expect(isContextOverflowError(error)).toBe(true);
    expect(error.retryable).toBe(false);
    const lookalike = Object.assign(new Error("x"), {
      name: "ContextOverflowError",
      [Symbol.for("simple-agent-loop.error")]: true,
    });
    expect(isContextOverflowError(lookalike)).toBe(true);
    expect(isContextOverflowError(new Error("prompt is too long"))).toBe(false);
  });
});
