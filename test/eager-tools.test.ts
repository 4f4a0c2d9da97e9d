import { describe, expect, it } from "vitest";
import {
  agentLoop,
  initSession,
  tool,
  type AgentEvent,
  type ModelMessage,
  type ModelStreamEvent,
} from "simple-agent-loop";
import { expectEveryCallAnsweredOnce, sleep, withoutTs } from "./helpers.ts";

const call = (id: string, name = "work"): ModelMessage => ({ type: "tool_call", id, name, input: {} });

/** A streamed turn: each step is a message, a pause (ms), a point to wait for (a promise), or a failure. */
function streamed(
  ...steps: (ModelMessage | number | Promise<unknown> | Error | { end: ModelStreamEvent & { type: "response-end" } })[]
) {
  return async function* (): AsyncGenerator<ModelStreamEvent> {
    for (const step of steps) {
      if (typeof step === "number") await sleep(step);
      else if (step instanceof Promise) await step;
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

/**
 * A point the test reaches once `open` is called, or after `fallbackMs` whatever happens: the
 * stream waits on it instead of guessing how long the loop takes, and a loop that never opens it
 * still ends, with the assertion on the order failing instead of the test hanging.
 */
function checkpoint(fallbackMs = 5_000): { open: () => void; reached: Promise<void> } {
  let open = (): void => undefined;
  const reached = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, fallbackMs);
    open = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  return { open, reached };
}

/** Settles with "aborted" when the signal aborts, or with `late` after `fallbackMs` (far beyond any run that stops it). */
function untilAborted(signal: AbortSignal, late: string, fallbackMs = 10_000): Promise<string> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(late), fallbackMs);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve("aborted");
    });
  });
}

describe("eager tool starts (a tool starts when its call is complete in the stream)", () => {
  it("starts each call while the model is still streaming the rest; results still enter in call order", async () => {
    const log: string[] = [];
    const aStarted = checkpoint();
    const bDone = checkpoint();
    const work = async (_input: unknown, context: { id: string }) => {
      log.push(`start ${context.id}`);
      if (context.id === "a") {
        aStarted.open();
        // a ends after b: results enter in call order, not in the order the tools end.
        await bDone.reached;
      }
      log.push(`end ${context.id}`);
      if (context.id === "b") bDone.open();
      return `done ${context.id}`;
    };
    const invoke = model(
      streamed(call("a"), aStarted.reached, call("b"), { end: { type: "response-end", stopReason: "tool_use" } }),
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
    expect(log.indexOf("end b")).toBeLessThan(log.indexOf("end a"));
    expect(withoutTs(session).slice(4, 6)).toStrictEqual([
      { type: "tool_result", id: "a", output: "done a" },
      { type: "tool_result", id: "b", output: "done b" },
    ]);
    // The call entered the session before its result, even though it ran early.
    const order = events
      .filter((event) => event.type === "message")
      .map((event) => ("id" in event.message ? `${event.message.type}:${event.message.id}` : "text"));
    expect(order.indexOf("tool_call:a")).toBeLessThan(order.indexOf("tool_result:a"));
  });

  it("saves the streaming time: the tools run while the rest of the response streams; eagerTools: false waits for its end", async () => {
    // What saves the time is the overlap, asserted as the order of what happened (a loaded machine
    // stretches every duration): the stream goes on only once the tool is running, or after a
    // fallback long enough that a run that does not start it early fails on the order.
    const timeline = async (eagerTools: boolean) => {
      const log: string[] = [];
      const running = new Map(["1", "2", "3"].map((id) => [id, checkpoint(eagerTools ? 5_000 : 0)]));
      const streamEnded = checkpoint();
      const slow = async (_input: unknown, context: { id: string }) => {
        log.push(`start ${context.id}`);
        running.get(context.id)!.open();
        await streamEnded.reached;
        log.push(`end ${context.id}`);
        return "ok";
      };
      const turn = async function* (): AsyncGenerator<ModelStreamEvent> {
        for (const id of ["1", "2", "3"]) {
          yield { type: "message", message: call(id, "slow") };
          await running.get(id)!.reached;
        }
        log.push("stream end");
        streamEnded.open();
        yield { type: "response-end", stopReason: "tool_use" };
      };
      await agentLoop(model(turn, streamed({ role: "assistant", content: "done" })), [], initSession("s", "u"), {
        toolHandlers: { slow },
        eagerTools,
      });
      return log;
    };
    expect(await timeline(true)).toStrictEqual([
      "start 1",
      "start 2",
      "start 3",
      "stream end",
      "end 1",
      "end 2",
      "end 3",
    ]);
    expect((await timeline(false)).slice(0, 2)).toStrictEqual(["stream end", "start 1"]);
  });

  it("a tool with eager: false, or eagerTools: false, waits for the response to end", async () => {
    const starts: number[] = [];
    let streamEnd = 0;
    const later = tool({
      name: "later",
      description: "d",
      inputSchema: { type: "object" },
      eager: false,
      handler: () => void starts.push(performance.now()),
    });
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
    // The first run ends only when stopped (the failure must be what ends it, however slowly the
    // stream reaches it); the retry's run finishes at once.
    const work = async (_input: unknown, context: { signal: AbortSignal }) => {
      runs++;
      if (runs > 1) return "finished";
      const outcome = await untilAborted(context.signal, "finished");
      if (outcome === "aborted") aborted++;
      return outcome;
    };
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
    const invoke = model(
      streamed(call("ran"), 20, call("late", "never"), { end: { type: "response-end", stopReason: "max_tokens" } }),
    );
    const never = tool({
      name: "never",
      description: "d",
      inputSchema: { type: "object" },
      eager: false,
      handler: () => "should not run",
    });
    const session = await agentLoop(invoke, [never], initSession("s", "u"), {
      toolHandlers: { work: () => "did run" },
    });
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
      return untilAborted(context.signal, "done");
    };
    const invoke = model(
      streamed(
        call("a"),
        20,
        { role: "assistant", content: "never mind" },
        { end: { type: "response-end", stopReason: "tool_use" } },
      ),
    );
    const session = await agentLoop(invoke, [], initSession("s", "u"), {
      toolHandlers: { work },
      hooks: {
        afterModelCall: ({ messages }) => ({
          messages: messages.filter((message) => !("type" in message && message.type === "tool_call")),
        }),
      },
    });
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(true);
    expect(withoutTs(session).slice(2)).toStrictEqual([
      { role: "assistant", content: "never mind", stopReason: "tool_use" },
    ]);
  });

  it("a call the afterModelCall hook removed from a turn that keeps others is stopped once the others are answered", async () => {
    const signals = new Map<string, AbortSignal>();
    const work = async (_input: unknown, context: { id: string; signal: AbortSignal }) => {
      signals.set(context.id, context.signal);
      if (context.id === "removed") return untilAborted(context.signal, "done removed");
      return `done ${context.id}`;
    };
    const invoke = model(
      streamed(call("removed"), 10, call("kept"), { end: { type: "response-end", stopReason: "tool_use" } }),
      streamed({ role: "assistant", content: "ok" }),
    );
    const session = await agentLoop(invoke, [], initSession("s", "u"), {
      toolHandlers: { work },
      hooks: {
        afterModelCall: ({ messages }) => ({
          messages: messages.filter((message) => !("id" in message && message.id === "removed")),
        }),
      },
    });
    expect(signals.get("removed")?.aborted).toBe(true);
    expect(withoutTs(session).slice(2)).toStrictEqual([
      { type: "tool_call", id: "kept", name: "work", input: {}, stopReason: "tool_use" },
      { type: "tool_result", id: "kept", output: "done kept" },
      { role: "assistant", content: "ok" },
    ]);
  });
});
