import { describe, expect, it } from "vitest";
import {
  agentLoop,
  initSession,
  isTimeoutError,
  response,
  withFallback,
  type AgentEvent,
  type InvokeModel,
  type ModelMessage,
  type ModelStreamEvent,
  type TimeoutError,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { withoutTs } from "./helpers.ts";

// Far from any limit below: a model that waits this long is one that waits until it is aborted.
const forever = 600_000;

// Answers after the call's signal aborts: rejects with its reason, as a provider adapter does.
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason as Error);
    signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true });
  });
}

async function failure(run: Promise<unknown>): Promise<TimeoutError> {
  const error: unknown = await run.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!isTimeoutError(error)) throw new Error(`expected a TimeoutError, got ${String(error)}`);
  return error;
}

describe("timeouts.modelCallMs and timeouts.firstChunkMs", () => {
  it("times out a slow attempt and keeps only the retry's answer", async () => {
    const model = scriptedModel([
      { delay: forever, messages: [{ role: "assistant", content: "too late" }] },
      [{ role: "assistant", content: "in time" }],
    ]);
    const events: AgentEvent[] = [];
    const session = await agentLoop(model, [], initSession("s", "u"), {
      timeouts: { modelCallMs: 50 },
      retry: { initialDelayMs: 0 },
      onEvent: (event) => events.push(event),
    });
    const answers = withoutTs(session).filter((message) => "role" in message && message.role === "assistant");
    expect(answers).toStrictEqual([{ role: "assistant", content: "in time" }]);
    expect(response(session)?.content).toBe("in time");
    const retries = events.filter((event) => event.type === "retry");
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ attempt: 1, errorType: "TimeoutError" });
    expect(retries[0]!.type === "retry" && retries[0]!.error).toMatch(/modelCallMs.*waited \d+ ms/);
  });

  it("aborts the attempt's signal with the TimeoutError as its reason, and gives the retry a fresh signal", async () => {
    const signals: AbortSignal[] = [];
    const model: InvokeModel = (_tools, _session, context) => {
      signals.push(context.signal);
      if (signals.length === 1) return untilAborted(context.signal);
      return Promise.resolve<ModelMessage[]>([{ role: "assistant", content: "second" }]);
    };
    const session = await agentLoop(model, [], initSession("s", "u"), {
      timeouts: { modelCallMs: 50 },
      retry: { initialDelayMs: 0 },
    });
    expect(response(session)?.content).toBe("second");
    expect(signals).toHaveLength(2);
    expect(signals[0]!.aborted).toBe(true);
    const reason: unknown = signals[0]!.reason;
    expect(isTimeoutError(reason)).toBe(true);
    const timeout = reason as TimeoutError;
    expect(timeout.limit).toBe("modelCallMs");
    expect(timeout.retryable).toBe(true);
    expect(timeout.waitedMs).toBeGreaterThanOrEqual(40);
    expect(timeout.message).toContain("modelCallMs");
    expect(timeout.message).toContain(`${Math.round(timeout.waitedMs)} ms`);
    expect(signals[1]!.aborted).toBe(false);
  });

  it("fails a stream whose first event comes too late with limit firstChunkMs, session unchanged with retry: false", async () => {
    const model = scriptedModel([{ delay: forever, stream: true, messages: [{ role: "assistant", content: "late" }] }]);
    const session = initSession("s", "u");
    const before = structuredClone(session);
    const error = await failure(
      agentLoop(model, [], session, { timeouts: { firstChunkMs: 50, modelCallMs: forever }, retry: false }),
    );
    expect(error.limit).toBe("firstChunkMs");
    expect(error.message).toContain("firstChunkMs");
    expect(session).toStrictEqual(before);
    expect(model.callCount).toBe(1);
  });

  it("fails a model that does not stream with limit firstChunkMs when its whole answer comes too late", async () => {
    const model = scriptedModel([{ delay: forever, messages: [{ role: "assistant", content: "late" }] }]);
    const session = initSession("s", "u");
    const before = structuredClone(session);
    const error = await failure(agentLoop(model, [], session, { timeouts: { firstChunkMs: 50 }, retry: false }));
    expect(error.limit).toBe("firstChunkMs");
    expect(session).toStrictEqual(before);
  });

  it("stops counting firstChunkMs at the first event: a stream that then runs on fails with limit modelCallMs", async () => {
    const seen: string[] = [];
    const model: InvokeModel = (_tools, _session, context) =>
      (async function* (): AsyncGenerator<ModelStreamEvent> {
        yield { type: "text-delta", delta: "part" };
        await untilAborted(context.signal);
      })();
    const session = initSession("s", "u");
    const before = structuredClone(session);
    const error = await failure(
      agentLoop(model, [], session, {
        // firstChunkMs shorter than modelCallMs: had it kept counting after the first event, it would fire first.
        timeouts: { firstChunkMs: 300, modelCallMs: 900 },
        retry: false,
        onEvent: (event) => {
          if (event.type === "text-delta") seen.push(event.delta);
        },
      }),
    );
    expect(seen).toStrictEqual(["part"]);
    expect(error.limit).toBe("modelCallMs");
    expect(error.waitedMs).toBeGreaterThanOrEqual(800);
    expect(session).toStrictEqual(before);
  });

  it("lets an answer in time through untouched, streamed or not", async () => {
    const model = scriptedModel([
      { stream: true, messages: [{ role: "assistant", content: "streamed" }] },
      [{ role: "assistant", content: "at once" }],
    ]);
    const first = await agentLoop(model, [], initSession("s", "u"), {
      timeouts: { modelCallMs: forever, firstChunkMs: forever },
    });
    expect(response(first)?.content).toBe("streamed");
    const second = await agentLoop(model, [], initSession("s", "u"), {
      timeouts: { modelCallMs: forever, firstChunkMs: forever },
    });
    expect(response(second)?.content).toBe("at once");
  });

  it("withFallback takes a timed-out attempt as a failure of that model and moves to the next", async () => {
    let slowCalls = 0;
    const slow: InvokeModel = (_tools, _session, context) => {
      slowCalls++;
      return untilAborted(context.signal);
    };
    const fast = scriptedModel([[{ role: "assistant", content: "from the second model" }]]);
    const events: AgentEvent[] = [];
    const session = await agentLoop(withFallback([slow, fast]), [], initSession("s", "u"), {
      timeouts: { modelCallMs: 50 },
      retry: { initialDelayMs: 0 },
      onEvent: (event) => events.push(event),
    });
    expect(response(session)?.content).toBe("from the second model");
    expect(slowCalls).toBe(1);
    expect(fast.callCount).toBe(1);
    const fallbacks = events.filter((event) => event.type === "fallback");
    expect(fallbacks).toHaveLength(1);
    expect(fallbacks[0]).toMatchObject({ from: 0, to: 1, errorType: "TimeoutError" });
    expect(events.filter((event) => event.type === "retry")).toMatchObject([{ errorType: "TimeoutError" }]);
  });

  it("withFallback does the same when the timed-out model ignores its signal", async () => {
    const deaf: InvokeModel = () => new Promise<never>(() => undefined);
    const fast = scriptedModel([[{ role: "assistant", content: "answered" }]]);
    const events: AgentEvent[] = [];
    const session = await agentLoop(withFallback([deaf, fast]), [], initSession("s", "u"), {
      timeouts: { firstChunkMs: 50 },
      retry: { initialDelayMs: 0 },
      onEvent: (event) => events.push(event),
    });
    expect(response(session)?.content).toBe("answered");
    expect(events.filter((event) => event.type === "fallback")).toMatchObject([
      { from: 0, to: 1, errorType: "TimeoutError" },
    ]);
  });
});
