import { describe, expect, it } from "vitest";
import { agentLoop, initSession, tool, type AgentEvent, type ModelMessage, type ModelStreamEvent } from "simple-agent-loop";
import { expectEveryCallAnsweredOnce, sleep, withoutTs } from "./helpers.ts";

const call = (id: string, name = "work"): ModelMessage => ({ type: "tool_call", id, name, input: {} });

/** A streamed turn: each step is a message, a pause (ms), or a failure. */
function streamed(...steps: (ModelMessage | number | Error | { end: ModelStreamEvent & { type: "response-end" } })[]) {
  return async function* (): AsyncGenerator<ModelStreamEvent> {
    for (const step of steps) {
      if (typeof step === "number") await sleep(step);
      else if (step instanceof Error) throw step;
      else if ("end" in step) yield step.end;
      else yield { type: "message", message: step };
    }
  };
}

function model(...turns: (() => AsyncGenerator<ModelStreamEvent>)[]) {
  let index = 0;
  return () => turns[index++]!();
}

describe("eager tool starts (a tool starts when its call is complete in the stream)", () => {
  it("starts each call while the model is still streaming the rest; results still enter in call order", async () => {
    const log: string[] = [];
    const work = async (_input: unknown, context: { id: string }) => {
      log.push(`start ${context.id}`);
      await sleep(context.id === "a" ? 60 : 1);
      return `done ${context.id}`;
    };
    const invoke = model(
      streamed(call("a"), 40, call("b"), 40, { end: { type: "response-end", stopReason: "tool_use" } }),
      streamed({ role: "assistant", content: "ok" }),
    );
    const events: AgentEvent[] = [];
    const session = await agentLoop(invoke, [], initSession("s", "u"), {
      toolHandlers: { work },
      onEvent: (event) => {
        events.push(event);
        if (event.type === "tool-call-end") log.push(`complete ${event.id}`);
      },
    });
    expect(log.slice(0, 3)).toStrictEqual(["complete a", "start a", "complete b"]);
    expect(withoutTs(session).slice(4, 6)).toStrictEqual([
      { type: "tool_result", id: "a", output: "done a" },
      { type: "tool_result", id: "b", output: "done b" },
    ]);
    // The call entered the session before its result, even though it ran early.
    const order = events.filter((event) => event.type === "message").map((event) => ("id" in event.message ? `${event.message.type}:${event.message.id}` : "text"));
    expect(order.indexOf("tool_call:a")).toBeLessThan(order.indexOf("tool_result:a"));
  });

  it("saves the streaming time: 3 calls early in a 350 ms stream, 300 ms tools, ends well before stream + tools", async () => {
    const slow = async () => {
      await sleep(300);
      return "ok";
    };
    const turn = () => streamed(call("1", "slow"), 50, call("2", "slow"), 50, call("3", "slow"), 250, { end: { type: "response-end", stopReason: "tool_use" } });
    const timed = async (eagerTools: boolean) => {
      const started = performance.now();
      await agentLoop(model(turn(), streamed({ role: "assistant", content: "done" })), [], initSession("s", "u"), { toolHandlers: { slow }, eagerTools });
      return performance.now() - started;
    };
    const [eager, waiting] = [await timed(true), await timed(false)];
    // Waiting: ~350 ms of stream, then ~300 ms of tools. Eager: the last tool ends ~400 ms in.
    expect(waiting).toBeGreaterThanOrEqual(640);
    expect(eager).toBeLessThan(waiting - 150);
  });

  it("a tool with eager: false, or eagerTools: false, waits for the response to end", async () => {
    const starts: number[] = [];
    let streamEnd = 0;
    const later = tool({ name: "later", description: "d", inputSchema: { type: "object" }, eager: false, handler: () => void starts.push(performance.now()) });
    const invoke = model(
      async function* () {
        yield* streamed(call("x", "later"), 50)();
        streamEnd = performance.now();
        yield { type: "response-end", stopReason: "tool_use" };
      },
      streamed({ role: "assistant", content: "ok" }),
    );
    await agentLoop(invoke, [later], initSession("s", "u"));
    expect(starts[0]).toBeGreaterThanOrEqual(streamEnd);
  });

  it("a stream that fails after an early start: the tool is aborted, its call never enters the session, the retry runs it again", async () => {
    let aborted = 0;
    let runs = 0;
    const work = (_input: unknown, context: { signal: AbortSignal }) =>
      new Promise((resolve) => {
        runs++;
        const timer = setTimeout(() => resolve("finished"), 30);
        context.signal.addEventListener("abort", () => {
          aborted++;
          clearTimeout(timer);
          resolve("aborted");
        });
      });
    const failure = Object.assign(new Error("connection reset"), { retryable: true, retryAfterMs: 1 });
    const invoke = model(
      streamed(call("c1"), 5, failure),
      streamed(call("c1"), { end: { type: "response-end", stopReason: "tool_use" } }),
      streamed({ role: "assistant", content: "ok" }),
    );
    const session = await agentLoop(invoke, [], initSession("s", "u"), { toolHandlers: { work } });
    expect(aborted).toBe(1);
    expect(runs).toBe(2);
    expect(withoutTs(session).slice(2)).toStrictEqual([
      { type: "tool_call", id: "c1", name: "work", input: {}, stopReason: "tool_use" },
      { type: "tool_result", id: "c1", output: "finished" },
      { role: "assistant", content: "ok" },
    ]);
  });

  it("a response that then stops for max_tokens: started calls keep their real result, the others get errors", async () => {
    const invoke = model(streamed(call("ran"), 20, call("late", "never"), { end: { type: "response-end", stopReason: "max_tokens" } }));
    const never = tool({ name: "never", description: "d", inputSchema: { type: "object" }, eager: false, handler: () => "should not run" });
    const session = await agentLoop(invoke, [never], initSession("s", "u"), { toolHandlers: { work: () => "did run" } });
    expect(withoutTs(session).slice(4)).toStrictEqual([
      { type: "tool_result", id: "ran", output: "did run" },
      { type: "tool_result", id: "late", output: expect.stringContaining('stopped with "max_tokens"'), isError: true },
    ]);
    expectEveryCallAnsweredOnce(session);
  });

  it("a call after response-end (cut by the length limit, input {}) never starts early, and is not run", async () => {
    let ran = false;
    const invoke = model(async function* () {
      yield { type: "response-end", stopReason: "max_tokens" };
      yield { type: "message", message: call("cut") };
    });
    const session = await agentLoop(invoke, [], initSession("s", "u"), { toolHandlers: { work: () => (ran = true) } });
    expect(ran).toBe(false);
    expect(withoutTs(session).at(-1)).toMatchObject({ type: "tool_result", id: "cut", isError: true });
  });

  it("a call the afterModelCall hook removed is stopped if it started early: it never entered the session", async () => {
    const signals: AbortSignal[] = [];
    const work = async (_input: unknown, context: { signal: AbortSignal }) => {
      signals.push(context.signal);
      await sleep(200);
      return "done";
    };
    const invoke = model(streamed(call("a"), 20, { role: "assistant", content: "never mind" }, { end: { type: "response-end", stopReason: "tool_use" } }));
    const session = await agentLoop(invoke, [], initSession("s", "u"), {
      toolHandlers: { work },
      hooks: { afterModelCall: ({ messages }) => ({ messages: messages.filter((message) => !("type" in message && message.type === "tool_call")) }) },
    });
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(true);
    expect(withoutTs(session).slice(2)).toStrictEqual([{ role: "assistant", content: "never mind", stopReason: "tool_use" }]);
  });

  it("a call the afterModelCall hook removed from a turn that keeps others is stopped once the others are answered", async () => {
    const signals = new Map<string, AbortSignal>();
    const work = async (_input: unknown, context: { id: string; signal: AbortSignal }) => {
      signals.set(context.id, context.signal);
      await sleep(context.id === "removed" ? 300 : 5);
      return `done ${context.id}`;
    };
    const invoke = model(
      streamed(call("removed"), 10, call("kept"), { end: { type: "response-end", stopReason: "tool_use" } }),
      streamed({ role: "assistant", content: "ok" }),
    );
    const session = await agentLoop(invoke, [], initSession("s", "u"), {
      toolHandlers: { work },
      hooks: { afterModelCall: ({ messages }) => ({ messages: messages.filter((message) => !("id" in message && message.id === "removed")) }) },
    });
    expect(signals.get("removed")?.aborted).toBe(true);
    expect(withoutTs(session).slice(2)).toStrictEqual([
      { type: "tool_call", id: "kept", name: "work", input: {}, stopReason: "tool_use" },
      { type: "tool_result", id: "kept", output: "done kept" },
      { role: "assistant", content: "ok" },
    ]);
  });
});
