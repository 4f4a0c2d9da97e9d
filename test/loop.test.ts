import { describe, expect, it } from "vitest";
import {
  agentLoop,
  initSession,
  isMaxIterationsError,
  MaxIterationsError,
  response,
  send,
  InvalidModelResponseError,
  type AgentEvent,
  type ModelMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { addSchema, expectEveryCallAnsweredOnce, sleep, withoutTs } from "./helpers.ts";

const add = (input: { a: number; b: number }): string => String(input.a + input.b);

describe("agentLoop: the basic cases", () => {
  it("runs the addition tool and answers with its result", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "call_1", name: "add", input: { a: 98765432101234, b: 12345678909876 } }],
      (session) => {
        const result = session.messages.at(-1);
        return [
          {
            role: "assistant",
            content: `The sum is ${result !== undefined && "output" in result ? (result.output as string) : "?"}`,
          },
        ];
      },
    ]);
    const session = initSession("You add numbers.", "What is 98765432101234 + 12345678909876?");
    const returned = await agentLoop(model, [addSchema], session, { toolHandlers: { add } });

    expect(returned).toBe(session);
    expect(response(session)?.content).toBe("The sum is 111111111011110");
    expect(withoutTs(session)).toStrictEqual([
      { role: "system", content: "You add numbers." },
      { role: "user", content: "What is 98765432101234 + 12345678909876?" },
      { type: "tool_call", id: "call_1", name: "add", input: { a: 98765432101234, b: 12345678909876 } },
      { type: "tool_result", id: "call_1", output: "111111111011110" },
      { role: "assistant", content: "The sum is 111111111011110" },
    ]);
    // The second model call saw the tool result (results go into the next request).
    expect(model.calls[1]?.messages.at(-1)).toMatchObject({
      type: "tool_result",
      id: "call_1",
      output: "111111111011110",
    });
    expect(model.toolsSeen[0]).toStrictEqual([addSchema]);
  });

  it("returns after one model call when the model answers without tools", async () => {
    const model = scriptedModel([[{ role: "assistant", content: "Hello, Bonjour, Hola" }]]);
    const session = await agentLoop(model, [], initSession("s", "Say hello in three languages."), { maxIterations: 1 });
    expect(model.callCount).toBe(1);
    expect(response(session)?.content).toBe("Hello, Bonjour, Hola");
    expect(session.messages).toHaveLength(3);
  });

  it("sequential mode runs tools one at a time, in call order", async () => {
    const log: string[] = [];
    const slowFirst = async (input: { n: number }): Promise<string> => {
      log.push(`start ${input.n}`);
      await sleep(input.n === 1 ? 40 : 1);
      log.push(`end ${input.n}`);
      return `done ${input.n}`;
    };
    const model = scriptedModel([
      [1, 2, 3].map((n): ModelMessage => ({ type: "tool_call", id: `c${n}`, name: "work", input: { n } })),
      [{ role: "assistant", content: "ok" }],
    ]);
    const session = await agentLoop(model, [], initSession("s", "u"), {
      toolHandlers: { work: slowFirst },
      parallel: false,
    });
    expect(log).toStrictEqual(["start 1", "end 1", "start 2", "end 2", "start 3", "end 3"]);
    expect(session.messages.slice(5, 8).map((message) => ("output" in message ? message.output : null))).toStrictEqual([
      "done 1",
      "done 2",
      "done 3",
    ]);
  });

  it("max iterations: throws MaxIterationsError naming the limit and the last action, with every call answered", async () => {
    const forever = scriptedModel(
      Array.from({ length: 10 }, (_, index): ModelMessage[] => [
        { type: "tool_call", id: `c${index}`, name: "add", input: { a: index, b: 1 } },
      ]),
    );
    const session = initSession("s", "loop forever");
    const error = await agentLoop(forever, [addSchema], session, {
      toolHandlers: { add },
      maxIterations: 3,
      name: "looper",
    }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(MaxIterationsError);
    expect(isMaxIterationsError(error)).toBe(true);
    const limitError = error as MaxIterationsError;
    expect(limitError.message).toContain("maxIterations (3)");
    expect(limitError.message).toContain('"looper"');
    expect(limitError.message).toContain('add({"a":2,"b":1})');
    expect(limitError.maxIterations).toBe(3);
    expect(limitError.session).toBe(session);
    expect(forever.callCount).toBe(3);
    // All the work done is kept: three calls, three results.
    expect(session.messages.filter((message) => "type" in message && message.type === "tool_result")).toHaveLength(3);
    expectEveryCallAnsweredOnce(session);
  });

  it("does not throw when the last allowed call is the final answer", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "c1", name: "add", input: { a: 1, b: 2 } }],
      [{ role: "assistant", content: "3" }],
    ]);
    const session = await agentLoop(model, [addSchema], initSession("s", "u"), {
      toolHandlers: { add },
      maxIterations: 2,
    });
    expect(response(session)?.content).toBe("3");
  });

  it("an error thrown by invokeModel propagates and leaves nothing half-written", async () => {
    const failure = new Error("provider exploded");
    const model = scriptedModel([
      [{ type: "tool_call", id: "c1", name: "add", input: { a: 1, b: 2 } }],
      { error: failure },
    ]);
    const session = initSession("s", "u");
    await expect(agentLoop(model, [addSchema], session, { toolHandlers: { add } })).rejects.toBe(failure);
    expect(withoutTs(session).slice(2)).toStrictEqual([
      { type: "tool_call", id: "c1", name: "add", input: { a: 1, b: 2 } },
      { type: "tool_result", id: "c1", output: "3" },
    ]);
  });

  it("a stream that fails mid-turn adds none of that turn's messages", async () => {
    const session = initSession("s", "u");
    const failing = async function* () {
      yield { type: "text-delta" as const, delta: "Hel" };
      yield { type: "message" as const, message: { role: "assistant" as const, content: "Hello" } };
      throw new Error("connection reset");
    };
    await expect(agentLoop(() => failing(), [], session)).rejects.toThrow("connection reset");
    expect(session.messages).toHaveLength(2);
  });

  it("refuses a malformed model response before adding any of it", async () => {
    const session = initSession("s", "u");
    const model = scriptedModel([
      [
        { role: "assistant", content: "calling" },
        { type: "tool_call", id: "same", name: "add", input: { a: 1, b: 1 } },
        { type: "tool_call", id: "same", name: "add", input: { a: 2, b: 2 } },
      ],
    ]);
    await expect(agentLoop(model, [addSchema], session, { toolHandlers: { add } })).rejects.toBeInstanceOf(
      InvalidModelResponseError,
    );
    await expect(agentLoop(() => [{ role: "user", content: "x" }] as never, [], session)).rejects.toThrow(
      /only assistant, thinking and tool_call/,
    );
    expect(session.messages).toHaveLength(2);
  });
});

describe("agentLoop: many runs in one process", () => {
  it("runs take turns between model calls, even when every model and tool answers at once", async () => {
    const order: string[] = [];
    const model = (name: string) => {
      let call = 0;
      return (): ModelMessage[] => {
        order.push(`${name}${++call}`);
        return call < 3
          ? [{ type: "tool_call", id: `${name}-${call}`, name: "add", input: { a: 1, b: 2 } }]
          : [{ role: "assistant", content: "3" }];
      };
    };
    const sessions = [initSession("s", "u"), initSession("s", "u")];
    await Promise.all([
      agentLoop(model("a"), [addSchema], sessions[0]!, { toolHandlers: { add } }),
      agentLoop(model("b"), [addSchema], sessions[1]!, { toolHandlers: { add } }),
    ]);
    expect(order).toEqual(["a1", "b1", "a2", "b2", "a3", "b3"]);
    for (const session of sessions) expect(response(session)?.content).toBe("3");
  });
});

describe("agentLoop: acceptance (a workspace agent, end to end)", () => {
  it("the checkpoint script: list files, then answer from the result", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "t1", name: "list_files", input: {} }],
      [{ role: "assistant", content: "The workspace contains README.md and src/index.ts." }],
    ]);
    const session = await agentLoop(model, [], initSession("s", "list the files in the workspace"), {
      toolHandlers: { list_files: () => "README.md, src/index.ts" },
    });
    expect(withoutTs(session).slice(1)).toStrictEqual([
      { role: "user", content: "list the files in the workspace" },
      { type: "tool_call", id: "t1", name: "list_files", input: {} },
      { type: "tool_result", id: "t1", output: "README.md, src/index.ts" },
      { role: "assistant", content: "The workspace contains README.md and src/index.ts." },
    ]);
    expect(withoutTs(model.calls[1]!).at(-1)).toStrictEqual({
      type: "tool_result",
      id: "t1",
      output: "README.md, src/index.ts",
    });
  });

  it("an unknown tool becomes an error result naming it, and the model goes on", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "t1", name: "read_fiel", input: { path: "x" } }],
      [{ role: "assistant", content: "sorry" }],
    ]);
    const session = await agentLoop(model, [addSchema], initSession("s", "u"), { toolHandlers: { add } });
    expect(withoutTs(session)[3]).toStrictEqual({
      type: "tool_result",
      id: "t1",
      output: 'Error: unknown tool "read_fiel". Available tools: add.',
      isError: true,
    });
    expect(response(session)?.content).toBe("sorry");
  });

  it("a throwing tool becomes an 'Error: <message>' result the model can correct", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "t1", name: "read_file", input: { path: "src/maths.ts" } }],
      [{ type: "tool_call", id: "t2", name: "read_file", input: { path: "src/math.ts" } }],
      [{ role: "assistant", content: "found it" }],
    ]);
    const readFile = (input: { path: string }): string => {
      if (input.path !== "src/math.ts") throw new Error(`File not found: ${input.path}. Did you mean src/math.ts?`);
      return "export const one = 1;";
    };
    const session = await agentLoop(model, [], initSession("s", "u"), { toolHandlers: { read_file: readFile } });
    expect(withoutTs(session).filter((message) => "type" in message && message.type === "tool_result")).toStrictEqual([
      {
        type: "tool_result",
        id: "t1",
        output: "Error: File not found: src/maths.ts. Did you mean src/math.ts?",
        isError: true,
      },
      { type: "tool_result", id: "t2", output: "export const one = 1;" },
    ]);
  });

  it("keeps every message in the order it occurred across several turns, and multi-turn via send", async () => {
    const model = scriptedModel([
      [
        { type: "thinking", content: "need a sum", signature: "s1" },
        { role: "assistant", content: "Let me add." },
        { type: "tool_call", id: "a", name: "add", input: { a: 1, b: 2 } },
      ],
      [{ role: "assistant", content: "3", stopReason: "end_turn", usage: { inputTokens: 10, outputTokens: 1 } }],
      [{ role: "assistant", content: "you are welcome" }],
    ]);
    const session = await agentLoop(model, [addSchema], initSession("s", "1+2?"), { toolHandlers: { add } });
    await agentLoop(model, [addSchema], send(session, "thanks"), { toolHandlers: { add } });
    expect(withoutTs(session).map((message) => ("role" in message ? message.role : message.type))).toStrictEqual([
      "system",
      "user",
      "thinking",
      "assistant",
      "tool_call",
      "tool_result",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(session.messages[6]).toMatchObject({ stopReason: "end_turn", usage: { inputTokens: 10, outputTokens: 1 } });
  });
});

describe("agentLoop: tool-call rules", () => {
  it("runs one response's tool calls concurrently and adds results in call order, not completion order", async () => {
    let running = 0;
    let peak = 0;
    const wait = async (input: { ms: number }): Promise<string> => {
      running++;
      peak = Math.max(peak, running);
      await sleep(input.ms);
      running--;
      return `waited ${input.ms}`;
    };
    const model = scriptedModel([
      [60, 1, 30].map((ms, index): ModelMessage => ({
        type: "tool_call",
        id: `w${index}`,
        name: "wait",
        input: { ms },
      })),
      [{ role: "assistant", content: "ok" }],
    ]);
    const session = await agentLoop(model, [], initSession("s", "u"), { toolHandlers: { wait } });
    expect(peak).toBe(3);
    expect(withoutTs(session).slice(5, 8)).toStrictEqual([
      { type: "tool_result", id: "w0", output: "waited 60" },
      { type: "tool_result", id: "w1", output: "waited 1" },
      { type: "tool_result", id: "w2", output: "waited 30" },
    ]);
  });

  it("maxParallelTools limits how many handlers run at once", async () => {
    let running = 0;
    let peak = 0;
    const work = async (): Promise<string> => {
      running++;
      peak = Math.max(peak, running);
      await sleep(5);
      running--;
      return "ok";
    };
    const model = scriptedModel([
      Array.from({ length: 7 }, (_, index): ModelMessage => ({
        type: "tool_call",
        id: `c${index}`,
        name: "work",
        input: {},
      })),
      [{ role: "assistant", content: "done" }],
    ]);
    const session = await agentLoop(model, [], initSession("s", "u"), { toolHandlers: { work }, maxParallelTools: 2 });
    expect(peak).toBe(2);
    expectEveryCallAnsweredOnce(session);
  });

  it("input failing the tool's schema gets an error result naming the field; the handler is not called", async () => {
    let called = 0;
    const model = scriptedModel([
      [{ type: "tool_call", id: "c1", name: "add", input: { a: "one", b: 2 } }],
      [{ type: "tool_call", id: "c2", name: "add", input: { a: 1 } }],
      [{ role: "assistant", content: "gave up" }],
    ]);
    const session = await agentLoop(model, [addSchema], initSession("s", "u"), {
      toolHandlers: {
        add: (input: { a: number; b: number }) => {
          called++;
          return input.a + input.b;
        },
      },
    });
    expect(called).toBe(0);
    const [first, second] = session.messages.filter((message) => "type" in message && message.type === "tool_result");
    expect(first).toMatchObject({ id: "c1", isError: true });
    expect(String((first as { output: unknown }).output)).toMatch(/^Error: invalid input for tool "add": a: .*integer/);
    expect(String((second as { output: unknown }).output)).toMatch(/required property "b"/);
  });

  it("tool calls of a response cut off by max_tokens are not executed; each gets an error result and the run ends", async () => {
    let called = 0;
    const model = scriptedModel([
      [
        { role: "assistant", content: "I'll write the file" },
        { type: "tool_call", id: "c1", name: "write", input: { path: "a.txt" }, stopReason: "max_tokens" },
      ],
    ]);
    const events: AgentEvent[] = [];
    const session = await agentLoop(model, [], initSession("s", "u"), {
      toolHandlers: { write: () => called++ },
      onEvent: (event) => events.push(event),
    });
    expect(called).toBe(0);
    expect(model.callCount).toBe(1);
    expect(withoutTs(session).at(-1)).toStrictEqual({
      type: "tool_result",
      id: "c1",
      output: expect.stringContaining('stopped with "max_tokens"'),
      isError: true,
    });
    expect(events.at(-1)).toStrictEqual({
      type: "run-end",
      outcome: "stopped",
      metrics: expect.objectContaining({ modelCalls: 1 }),
    });
  });

  it("a turn cut off by max_tokens counts its usage: its turn-end and the run's metrics carry it", async () => {
    const usage = { inputTokens: 120, outputTokens: 30 };
    const model = scriptedModel([
      [{ type: "tool_call", id: "c1", name: "write", input: {}, stopReason: "max_tokens", usage }],
    ]);
    const events: AgentEvent[] = [];
    await agentLoop(model, [], initSession("s", "u"), {
      toolHandlers: { write: () => "written" },
      onEvent: (event) => events.push(event),
    });
    expect(events.find((event) => event.type === "turn-end")).toStrictEqual({
      type: "turn-end",
      iteration: 1,
      stopReason: "max_tokens",
      usage,
    });
    const end = events.at(-1);
    expect(end?.type === "run-end" ? end.metrics?.usage : undefined).toMatchObject(usage);
  });

  it("runs tool calls when the stop reason is tool_use", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "c1", name: "add", input: { a: 2, b: 2 }, stopReason: "tool_use" }],
      [{ role: "assistant", content: "4", stopReason: "end_turn" }],
    ]);
    const session = await agentLoop(model, [addSchema], initSession("s", "u"), { toolHandlers: { add } });
    expect(session.messages[3]).toMatchObject({ type: "tool_result", output: "4" });
  });

  it("tool output may be any JSON value; undefined becomes an empty string; non-JSON values become errors", async () => {
    const model = scriptedModel([
      [
        { type: "tool_call", id: "obj", name: "obj", input: {} },
        { type: "tool_call", id: "void", name: "void", input: {} },
        { type: "tool_call", id: "big", name: "big", input: {} },
        { type: "tool_call", id: "date", name: "date", input: {} },
      ],
      [{ role: "assistant", content: "ok" }],
    ]);
    const session = await agentLoop(model, [], initSession("s", "u"), {
      toolHandlers: {
        obj: async () => ({ list: [1, "two", null], ok: true }),
        void: () => undefined,
        big: () => 10n,
        date: () => new Date("2024-01-02T03:04:05.000Z"),
      },
    });
    const outputs = withoutTs(session).slice(6, 10);
    expect(outputs[0]).toStrictEqual({ type: "tool_result", id: "obj", output: { list: [1, "two", null], ok: true } });
    expect(outputs[1]).toStrictEqual({ type: "tool_result", id: "void", output: "" });
    expect(outputs[2]).toMatchObject({ id: "big", isError: true, output: expect.stringMatching(/^Error: .*BigInt/) });
    expect(outputs[3]).toStrictEqual({ type: "tool_result", id: "date", output: "2024-01-02T03:04:05.000Z" });
    expect(JSON.parse(JSON.stringify(session))).toStrictEqual(session);
  });

  it("resumes a session whose last turn has tool calls without results: runs only the missing ones", async () => {
    const session = initSession("s", "u");
    session.messages.push(
      { type: "tool_call", id: "done", name: "count", input: {} },
      { type: "tool_call", id: "missing", name: "count", input: {} },
      { type: "tool_result", id: "done", output: "1" },
    );
    let runs = 0;
    const model = scriptedModel([[{ role: "assistant", content: "finished" }]]);
    await agentLoop(model, [], session, { toolHandlers: { count: () => String(++runs) } });
    expect(runs).toBe(1);
    expect(withoutTs(session).slice(5)).toStrictEqual([
      { type: "tool_result", id: "missing", output: "1" },
      { role: "assistant", content: "finished" },
    ]);
    expect(model.calls[0]?.messages).toHaveLength(6);
  });

  it("a tool timeout gives an error result and frees the run", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "h", name: "hang", input: {} }],
      [{ role: "assistant", content: "moved on" }],
    ]);
    const session = await agentLoop(model, [], initSession("s", "u"), {
      toolHandlers: { hang: () => new Promise(() => undefined) },
      toolTimeout: 50,
    });
    expect(withoutTs(session)[3]).toStrictEqual({
      type: "tool_result",
      id: "h",
      output: 'Error: tool "hang" timed out after 50 ms',
      isError: true,
    });
    expect(response(session)?.content).toBe("moved on");
  });
});

describe("agentLoop: events and logging", () => {
  it("emits the run's events in order, with every message as it enters", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "c1", name: "add", input: { a: 1, b: 1 } }],
      [{ role: "assistant", content: "2" }],
    ]);
    const events: AgentEvent[] = [];
    await agentLoop(model, [addSchema], initSession("s", "u"), {
      toolHandlers: { add },
      name: "adder",
      onEvent: (event) => events.push(event),
    });
    expect(
      events.map((event) =>
        event.type === "message"
          ? `message:${"role" in event.message ? event.message.role : event.message.type}`
          : event.type,
      ),
    ).toStrictEqual([
      "run-start",
      "turn-start",
      "message:tool_call",
      "tool-execution-start",
      "tool-execution-end",
      "message:tool_result",
      "turn-end",
      "turn-start",
      "message:assistant",
      "turn-end",
      "run-end",
    ]);
    expect(events[0]).toStrictEqual({ type: "run-start", agentName: "adder" });
    expect(events.at(-1)).toStrictEqual({
      type: "run-end",
      outcome: "done",
      metrics: expect.objectContaining({ modelCalls: 2 }),
    });
  });

  it("is silent by default and logs one line per message when asked", async () => {
    const lines: string[] = [];
    const model = scriptedModel([
      [{ type: "tool_call", id: "c1", name: "add", input: { a: 1, b: 1 } }],
      [{ role: "assistant", content: "2" }],
    ]);
    await agentLoop(model, [addSchema], initSession("s", "u"), {
      toolHandlers: { add },
      name: "adder",
      logger: (line) => lines.push(line),
    });
    expect(lines).toStrictEqual([
      '[adder] tool_call add {"a":1,"b":1}',
      "[adder] tool_result c1: 2",
      "[adder] assistant: 2",
    ]);
  });
});

describe("agentLoop: streaming invokeModel", () => {
  it("builds the turn from a streamed response and forwards its deltas", async () => {
    const model = scriptedModel(
      [
        [
          { role: "assistant", content: "adding now" },
          { type: "tool_call", id: "c1", name: "add", input: { a: 5, b: 6 }, stopReason: "tool_use" },
        ],
        [{ role: "assistant", content: "11", stopReason: "end_turn", usage: { inputTokens: 1, outputTokens: 1 } }],
      ],
      { stream: true },
    );
    const deltas: string[] = [];
    const session = await agentLoop(model, [addSchema], initSession("s", "u"), {
      toolHandlers: { add },
      onEvent: (event) => {
        if (event.type === "text-delta") deltas.push(event.delta);
      },
    });
    expect(deltas.join("")).toBe("adding now11");
    expect(withoutTs(session).slice(2)).toStrictEqual([
      { role: "assistant", content: "adding now" },
      { type: "tool_call", id: "c1", name: "add", input: { a: 5, b: 6 }, stopReason: "tool_use" },
      { type: "tool_result", id: "c1", output: "11" },
      { role: "assistant", content: "11", stopReason: "end_turn", usage: { inputTokens: 1, outputTokens: 1 } },
    ]);
  });

  it("records an empty turn as an empty assistant message", async () => {
    const session = await agentLoop(() => [], [], initSession("s", "u"));
    expect(withoutTs(session).at(-1)).toStrictEqual({ role: "assistant", content: "" });
  });
});

it("isMaxIterationsError is false for other errors", () => {
  expect(isMaxIterationsError(new Error("x"))).toBe(false);
});
