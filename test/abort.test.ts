import { describe, expect, it } from "vitest";
import {
  agentLoop,
  agentStream,
  initSession,
  response,
  tool,
  type AgentEvent,
  type ModelMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce, sleep, withoutTs } from "./helpers.ts";

describe("abort", () => {
  it("aborts a slow model call promptly and ends with an aborted assistant message (no throw)", async () => {
    const model = scriptedModel([{ delay: 60_000, messages: [{ role: "assistant", content: "too late" }] }]);
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 20);
    const session = await agentLoop(model, [], initSession("s", "u"), { signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(withoutTs(session).slice(2)).toStrictEqual([{ role: "assistant", content: "", stopReason: "aborted" }]);
  });

  it("an abort mid-stream keeps the text streamed so far as the aborted message's content (a failed attempt's text does not count)", async () => {
    const controller = new AbortController();
    let attempt = 0;
    const model = async function* () {
      attempt++;
      if (attempt === 1) {
        yield { type: "text-delta" as const, delta: "Void " };
        throw Object.assign(new Error("overloaded"), { retryable: true });
      }
      yield { type: "text-delta" as const, delta: "Hel" };
      yield { type: "text-delta" as const, delta: "lo" };
      controller.abort();
      await new Promise(() => undefined);
    };
    const session = await agentLoop(model, [], initSession("s", "u"), {
      signal: controller.signal,
      retry: { initialDelayMs: 1, maxDelayMs: 1 },
    });
    expect(attempt).toBe(2);
    expect(withoutTs(session).slice(2)).toStrictEqual([{ role: "assistant", content: "Hello", stopReason: "aborted" }]);
  });

  it("does not wait for an invokeModel that ignores its signal", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const session = await agentLoop(() => new Promise<ModelMessage[]>(() => undefined), [], initSession("s", "u"), {
      signal: controller.signal,
    });
    expect(response(session)).toMatchObject({ content: "", stopReason: "aborted" });
  });

  it("aborts running tools: they see the signal, unfinished calls get error results, finished ones keep theirs", async () => {
    const controller = new AbortController();
    let sawAbort = false;
    const model = scriptedModel([
      [
        { type: "tool_call", id: "fast", name: "fast", input: {} },
        { type: "tool_call", id: "slow", name: "slow", input: {} },
        { type: "tool_call", id: "deaf", name: "deaf", input: {} },
      ],
      [{ role: "assistant", content: "never called" }],
    ]);
    const session = await agentLoop(model, [], initSession("s", "u"), {
      signal: controller.signal,
      toolHandlers: {
        fast: () => {
          setTimeout(() => controller.abort(), 20);
          return "quick";
        },
        slow: (_input, context) =>
          new Promise((_resolve, reject) => {
            context.signal.addEventListener("abort", () => {
              sawAbort = true;
              reject(context.signal.reason as Error);
            });
          }),
        // Ignores its signal entirely: the run must not wait for it.
        deaf: () => new Promise(() => undefined),
      },
    });
    expect(sawAbort).toBe(true);
    expect(model.callCount).toBe(1);
    expect(withoutTs(session).slice(5)).toStrictEqual([
      { type: "tool_result", id: "fast", output: "quick" },
      { type: "tool_result", id: "slow", output: "Error: aborted before the tool finished", isError: true },
      { type: "tool_result", id: "deaf", output: "Error: aborted before the tool finished", isError: true },
      { role: "assistant", content: "", stopReason: "aborted" },
    ]);
    expectEveryCallAnsweredOnce(session);
  });

  it.each(["answers", "fails"])(
    "a lone call whose handler ignores its signal and %s after the abort is answered once: nothing enters the session after the run's end",
    async (late) => {
      const controller = new AbortController();
      // Answered whole, not streamed: the call starts after the model's answer, not early.
      let modelCalls = 0;
      const model = (): ModelMessage[] =>
        modelCalls++ === 0
          ? [{ type: "tool_call", id: "deaf", name: "deaf", input: {} }]
          : [{ role: "assistant", content: "never called" }];
      let settledLate = false;
      const session = await agentLoop(model, [], initSession("s", "u"), {
        // Nobody listens: the call takes the executor's shortest path, with no phases around the handler.
        signal: controller.signal,
        toolHandlers: {
          deaf: () =>
            new Promise((resolve, reject) => {
              setTimeout(() => controller.abort(), 20);
              setTimeout(() => {
                settledLate = true;
                if (late === "answers") resolve("too late");
                else reject(new Error("too late"));
              }, 120);
            }),
        },
      });
      const stored = withoutTs(session);
      await sleep(300);
      expect(settledLate).toBe(true);
      expect(withoutTs(session)).toStrictEqual(stored);
      expect(modelCalls).toBe(1);
      expect(stored.slice(3)).toStrictEqual([
        { type: "tool_result", id: "deaf", output: "Error: aborted before the tool finished", isError: true },
        { role: "assistant", content: "", stopReason: "aborted" },
      ]);
      expectEveryCallAnsweredOnce(session);
    },
  );

  it("abort() returns before the waiting call's result enters the session: the run goes on after the signal's listeners", async () => {
    const controller = new AbortController();
    const session = initSession("s", "u");
    let lengthsAroundAbort: number[] = [];
    let modelCalls = 0;
    const model = (): ModelMessage[] =>
      modelCalls++ === 0
        ? [{ type: "tool_call", id: "deaf", name: "deaf", input: {} }]
        : [{ role: "assistant", content: "never called" }];
    await agentLoop(model, [], session, {
      signal: controller.signal,
      toolHandlers: {
        deaf: () =>
          new Promise(() => {
            setTimeout(() => {
              const before = session.messages.length;
              controller.abort();
              lengthsAroundAbort = [before, session.messages.length];
            }, 20);
          }),
      },
    });
    expect(lengthsAroundAbort).toStrictEqual([3, 3]);
    expect(withoutTs(session).slice(3)).toStrictEqual([
      { type: "tool_result", id: "deaf", output: "Error: aborted before the tool finished", isError: true },
      { role: "assistant", content: "", stopReason: "aborted" },
    ]);
  });

  it("an already aborted signal answers pending calls and closes the session without calling the model", async () => {
    const session = initSession("s", "u");
    session.messages.push({ type: "tool_call", id: "p", name: "t", input: {} });
    let called = false;
    const model = scriptedModel([[{ role: "assistant", content: "x" }]]);
    await agentLoop(model, [], session, { signal: AbortSignal.abort(), toolHandlers: { t: () => (called = true) } });
    expect(called).toBe(false);
    expect(model.callCount).toBe(0);
    expect(withoutTs(session).slice(3)).toStrictEqual([
      { type: "tool_result", id: "p", output: "Error: aborted before the tool finished", isError: true },
      { role: "assistant", content: "", stopReason: "aborted" },
    ]);
  });

  it("an aborted session can be continued by running the loop again", async () => {
    const controller = new AbortController();
    controller.abort();
    const model = scriptedModel([[{ role: "assistant", content: "hello again" }]]);
    const session = await agentLoop(model, [], initSession("s", "u"), { signal: controller.signal });
    await agentLoop(model, [], session);
    expect(response(session)?.content).toBe("hello again");
  });
});

describe("agentStream", () => {
  it("yields the same events agentLoop passes to onEvent", async () => {
    const turns: ModelMessage[][] = [
      [{ type: "tool_call", id: "c", name: "echo", input: { text: "hi" } }],
      [{ role: "assistant", content: "hi" }],
    ];
    const options = { toolHandlers: { echo: (input: { text: string }) => input.text } };
    const fromStream: string[] = [];
    for await (const event of agentStream(scriptedModel(turns), [], initSession("s", "u"), options))
      fromStream.push(event.type);
    const fromLoop: string[] = [];
    await agentLoop(scriptedModel(turns), [], initSession("s", "u"), {
      ...options,
      onEvent: (event) => fromLoop.push(event.type),
    });
    expect(fromStream).toStrictEqual(fromLoop);
    expect(fromStream[0]).toBe("run-start");
    expect(fromStream.at(-1)).toBe("run-end");
  });

  it("starts on the first next() or on reading result; result resolves with the session either way", async () => {
    const turns: ModelMessage[][] = [[{ role: "assistant", content: "hi" }]];
    const idle = scriptedModel(turns);
    agentStream(idle, [], initSession("s", "u"));
    await sleep(5);
    expect(idle.callCount).toBe(0);

    const events: string[] = [];
    const session = initSession("s", "u");
    const stream = agentStream(scriptedModel(turns), [], session, { onEvent: (event) => events.push(event.type) });
    expect(await stream.result).toBe(session);
    expect(events).toStrictEqual(["run-start", "turn-start", "message", "turn-end", "run-end"]);

    const iterated = agentStream(scriptedModel(turns), [], initSession("s", "u"));
    const seen: string[] = [];
    for await (const event of iterated) seen.push(event.type);
    expect(seen).toStrictEqual(events);
    expect(response(await iterated.result)?.content).toBe("hi");
  });

  it("a consumer that stops early aborts the run cleanly: the session stays valid", async () => {
    let toolSawAbort = false;
    const model = scriptedModel([
      [{ type: "tool_call", id: "w", name: "wait", input: {} }],
      [{ role: "assistant", content: "never" }],
    ]);
    const session = initSession("s", "u");
    for await (const event of agentStream(model, [], session, {
      toolHandlers: {
        wait: (_input, context) =>
          new Promise((resolve) => {
            context.signal.addEventListener("abort", () => {
              toolSawAbort = true;
              resolve("stopped");
            });
          }),
      },
    })) {
      if (event.type === "tool-execution-start") break;
    }
    expect(toolSawAbort).toBe(true);
    expect(model.callCount).toBe(1);
    expectEveryCallAnsweredOnce(session);
    expect(withoutTs(session).at(-1)).toStrictEqual({ role: "assistant", content: "", stopReason: "aborted" });
  });

  it("an onEvent callback that throws aborts the run cleanly and the error reaches the caller", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "a", name: "slow", input: {} }],
      [{ role: "assistant", content: "never" }],
    ]);
    const session = initSession("s", "u");
    const failure = new Error("listener bug");
    await expect(
      agentLoop(model, [], session, {
        toolHandlers: {
          slow: (_input, context) => sleep(50).then(() => (context.signal.aborted ? "aborted" : "done")),
        },
        onEvent: (event: AgentEvent) => {
          if (event.type === "tool-execution-start") throw failure;
        },
      }),
    ).rejects.toBe(failure);
    expectEveryCallAnsweredOnce(session);
    expect(response(session)?.stopReason).toBe("aborted");
  });

  it("ends with a run-end error event before throwing an invokeModel error", async () => {
    const events: AgentEvent[] = [];
    const iterate = async (): Promise<void> => {
      for await (const event of agentStream(scriptedModel([{ error: new Error("boom") }]), [], initSession("s", "u")))
        events.push(event);
    };
    await expect(iterate()).rejects.toThrow("boom");
    expect(events.at(-1)).toStrictEqual({
      type: "run-end",
      outcome: "error",
      error: "boom",
      errorType: "Error",
      metrics: expect.objectContaining({ modelCalls: 1 }),
    });
  });
});

describe("AgentStream.abort", () => {
  it("ends the run as its signal would: running tools stop, every call answered, run-end aborted last, the session valid", async () => {
    let toolStarted!: () => void;
    const started = new Promise<void>((resolve) => (toolStarted = resolve));
    let sawAbort: unknown;
    const model = scriptedModel([
      [{ type: "tool_call", id: "c1", name: "wait", input: {} }],
      [{ role: "assistant", content: "never called" }],
    ]);
    const wait = tool({
      name: "wait",
      description: "waits for its signal",
      inputSchema: { type: "object" },
      handler: (_input, { signal }) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener("abort", () => {
            sawAbort = signal.reason;
            reject(new Error("stopped"));
          });
          toolStarted();
        }),
    });
    const stream = agentStream(model, [wait], initSession("s", "u"));
    const events: AgentEvent[] = [];
    const reading = (async () => {
      for await (const event of stream) events.push(event);
    })();
    await started;
    stream.abort("the user pressed stop");
    await reading;
    const session = await stream.result;
    expect(sawAbort).toBeDefined();
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "aborted" });
    expectEveryCallAnsweredOnce(session);
    expect(withoutTs(session).at(-1)).toStrictEqual({ role: "assistant", content: "", stopReason: "aborted" });
    expect(model.callCount).toBe(1);
  });

  it("does nothing once the run has ended", async () => {
    const stream = agentStream(scriptedModel([[{ role: "assistant", content: "hi" }]]), [], initSession("s", "u"));
    const session = await stream.result;
    stream.abort();
    expect(response(session)).toMatchObject({ content: "hi" });
    expect(session.messages).toHaveLength(3);
  });
});
