import { describe, expect, it } from "vitest";
import {
  agentLoop,
  agentStream,
  clampDelay,
  runAgent,
  defineAgent,
  handoff,
  imagePart,
  subagentTool,
  withFallback,
  type Message,
  compactSession,
  defaultMaxIterations,
  executeToolCalls,
  resumeTasks,
  initSession,
  isAgentError,
  isMaxIterationsError,
  maxTimerDelay,
  retryDelay,
  ProviderError,
  tool,
  type AgentLoopOptions,
  type ModelMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { sleep } from "./helpers.ts";

const answer: ModelMessage[] = [{ role: "assistant", content: "done" }];
const callTool = (id: string, name = "work"): ModelMessage[] => [{ type: "tool_call", id, name, input: {} }];

async function rejection(run: () => Promise<unknown>): Promise<unknown> {
  return run().then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe("numeric options are checked where they enter", () => {
  const bad: [string, AgentLoopOptions][] = [
    ["maxIterations", { maxIterations: Number.NaN }],
    ["maxIterations", { maxIterations: -1 }],
    ["maxIterations", { maxIterations: 2.5 }],
    ["maxParallelTools", { maxParallelTools: Number.NaN }],
    ["maxParallelTools", { maxParallelTools: 0 }],
    ["toolTimeout", { toolTimeout: Number.NaN }],
    ["toolTimeout", { toolTimeout: 0 }],
    ["toolTimeout", { toolTimeout: -5 }],
    ["outputAttempts", { outputAttempts: -1 }],
    ["retry.maxRetries", { retry: { maxRetries: Number.NaN } }],
    ["retry.initialDelayMs", { retry: { initialDelayMs: Number.POSITIVE_INFINITY } }],
    ["retry.maxDelayMs", { retry: { maxDelayMs: -1 } }],
    ["compaction.keepTurns", { compaction: { keepTurns: Number.NaN } }],
    ["maxIterations", { maxIterations: "3" as unknown as number }],
    ["timeouts", { timeouts: "30s" as never }],
    ["loopGuard", { loopGuard: "on" as never }],
    ["hooks", { hooks: [] as never }],
    ["agent", { agent: 5 as never }],
    ["prices", { prices: "claude" as never }],
    ['prices["m"].outputPerMTok', { prices: { m: { inputPerMTok: 3 } } as never }],
    ['prices["m"].inputPerMTok', { prices: { m: { inputPerMTok: "3", outputPerMTok: 15 } } as never }],
    ['prices["m"].cacheReadPerMTok', { prices: { m: { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: -1 } } }],
  ];
  for (const [name, options] of bad) {
    it(`agentLoop refuses ${name} = ${String(Object.values(options)[0] && JSON.stringify(options))} with an AgentError, before calling the model`, async () => {
      const model = scriptedModel([answer]);
      const error = await rejection(() => agentLoop(model, [], initSession("s", "u"), options));
      expect(isAgentError(error)).toBe(true);
      expect((error as Error).message).toContain(name);
      expect(model.callCount).toBe(0);
    });
  }

  it("refuses a tool's timeout that is not a duration, in tool() and in the loop", async () => {
    expect(() =>
      tool({ name: "t", description: "d", inputSchema: {}, timeout: Number.NaN, handler: () => "" }),
    ).toThrow(/timeout/);
    const error = await rejection(() =>
      agentLoop(
        scriptedModel([answer]),
        [{ name: "t", description: "d", input_schema: {}, handler: () => "", timeout: -1 }],
        initSession("s", "u"),
      ),
    );
    expect(isAgentError(error)).toBe(true);
    await expect(executeToolCalls([], {}, { maxParallelTools: Number.NaN })).rejects.toThrow(/maxParallelTools/);
    expect(() => compactSession(initSession("s", "u"), { maxLength: -1 })).toThrow(/maxLength/);
    expect(() => retryDelay(new Error("x"), 1, { maxRetries: -1 })).toThrow(/maxRetries/);
  });

  it("a timeout longer than a timer can hold does not fire at once; Infinity sets no timer", async () => {
    for (const options of [{ toolTimeout: 30 * 24 * 60 * 60 * 1000 }, { toolTimeout: Number.POSITIVE_INFINITY }, {}]) {
      const session = await agentLoop(scriptedModel([callTool("a"), answer]), [], initSession("s", "u"), {
        ...options,
        toolHandlers: { work: () => sleep(30).then(() => "finished") },
      });
      expect(session.messages.find((message) => "type" in message && message.type === "tool_result")).toMatchObject({
        output: "finished",
      });
    }
    const slow = tool({
      name: "work",
      description: "d",
      inputSchema: {},
      timeout: 3e9,
      handler: () => sleep(30).then(() => "finished"),
    });
    const [result] = await executeToolCalls(callTool("b") as never, {}, { tools: [slow] });
    expect(result).toMatchObject({ output: "finished" });
    // A tool's own Infinity overrides the loop's short timeout.
    const patient = tool({
      name: "work",
      description: "d",
      inputSchema: {},
      timeout: Number.POSITIVE_INFINITY,
      handler: () => sleep(40).then(() => "finished"),
    });
    const [patientResult] = await executeToolCalls(callTool("c") as never, {}, { tools: [patient], toolTimeout: 5 });
    expect(patientResult).toMatchObject({ output: "finished" });
  });

  it("a huge retry-after with maxDelayMs Infinity waits (it does not retry in a tight loop)", async () => {
    let calls = 0;
    const controller = new AbortController();
    const model = () => {
      calls++;
      throw new ProviderError("overloaded", { provider: "test", retryable: true, retryAfterMs: 1e12 });
    };
    const run = agentLoop(model, [], initSession("s", "u"), {
      retry: { maxDelayMs: Number.POSITIVE_INFINITY, maxRetries: 1000 },
      signal: controller.signal,
    });
    await sleep(200);
    controller.abort();
    await run;
    expect(calls).toBe(1);
    expect(
      retryDelay(new ProviderError("x", { provider: "t", retryable: true, retryAfterMs: 1e12 }), 1, {
        maxDelayMs: Number.POSITIVE_INFINITY,
      }),
    ).toBe(maxTimerDelay);
  });

  it("clampDelay gives delays setTimeout can hold", () => {
    expect([
      clampDelay(-1),
      clampDelay(Number.NaN),
      clampDelay(250),
      clampDelay(3e9),
      clampDelay(Number.POSITIVE_INFINITY),
    ]).toStrictEqual([0, 0, 250, maxTimerDelay, maxTimerDelay]);
    expect(maxTimerDelay).toBe(2 ** 31 - 1);
  });
});

describe("maxIterations has a default", () => {
  it(`a model that never stops is stopped after ${defaultMaxIterations} calls, with MaxIterationsError`, async () => {
    let calls = 0;
    const model = () => [{ type: "tool_call" as const, id: `c${++calls}`, name: "work", input: { step: calls } }];
    const error = await rejection(() =>
      agentLoop(model, [], initSession("s", "u"), { toolHandlers: { work: () => "again" } }),
    );
    expect(isMaxIterationsError(error)).toBe(true);
    expect(calls).toBe(defaultMaxIterations);
    expect((error as Error).message).toContain(`${defaultMaxIterations}, the default`);
  });

  it("Infinity lifts the cap", async () => {
    let calls = 0;
    const model = () =>
      ++calls > defaultMaxIterations + 5
        ? answer
        : [{ type: "tool_call" as const, id: `c${calls}`, name: "work", input: { step: calls } }];
    await agentLoop(model, [], initSession("s", "u"), {
      toolHandlers: { work: () => "again" },
      maxIterations: Number.POSITIVE_INFINITY,
      compaction: false,
    });
    expect(calls).toBe(defaultMaxIterations + 6);
  });
});

describe("agents, handoffs, fallbacks and parts are checked where they are made", () => {
  const model = (): ModelMessage[] => answer;
  const target = defineAgent({ name: "billing", systemPrompt: "s", invokeModel: model });
  const made: [string, () => unknown, RegExp][] = [
    [
      "an agent named by a number",
      () => defineAgent({ name: 5 as never, systemPrompt: "s", invokeModel: model }),
      /name/,
    ],
    [
      "an agent without a prompt",
      () => defineAgent({ name: "a", systemPrompt: 5 as never, invokeModel: model }),
      /systemPrompt/,
    ],
    [
      "an agent whose model is not a function",
      () => defineAgent({ name: "a", systemPrompt: "s", invokeModel: "gpt" as never }),
      /invokeModel/,
    ],
    [
      "an agent whose tools are not an array",
      () => defineAgent({ name: "a", systemPrompt: "s", invokeModel: model, tools: "x" as never }),
      /tools/,
    ],
    [
      "an agent handing off to a string",
      () => defineAgent({ name: "a", systemPrompt: "s", invokeModel: model, handoffs: ["billing" as never] }),
      /handoffs/,
    ],
    ["a handoff to something not an agent", () => handoff({ name: "billing" } as never), /defineAgent/],
    ["a handoff history of an unknown kind", () => handoff(target, { history: "recent" as never }), /history/],
    ["a handoff tool name no provider takes", () => handoff(target, { toolName: "hand over!" }), /toolName/],
    ["a handoff returnTo as text", () => handoff(target, { returnTo: "yes" as never }), /returnTo/],
    ["a handoff onHandoff not a function", () => handoff(target, { onHandoff: "log" as never }), /onHandoff/],
    [
      "a fallback's shouldFallBack not a function",
      () => withFallback([model], { shouldFallBack: true as never }),
      /shouldFallBack/,
    ],
    ["a subagent tool's answer of an unknown kind", () => subagentTool(target, { answer: "quote" as never }), /answer/],
    ["an image part of a page", () => imagePart(new Uint8Array([60, 104]), "text/html"), /image\/\*/],
    ...["read file", "", "a".repeat(65), "math.add"].map((name): [string, () => unknown, RegExp] => [
      `a tool named ${JSON.stringify(name)} (no provider takes it)`,
      () => tool({ name, description: "d", inputSchema: { type: "object" }, handler: () => "" }),
      /name must be 1-64/,
    ]),
    [
      "a tool whose input schema is a string",
      () => tool({ name: "t", description: "d", inputSchema: "object" as never, handler: () => "" }),
      /inputSchema/,
    ],
  ];
  for (const [name, make, mentions] of made)
    it(`refuses ${name}, naming the field`, () => {
      expect(make).toThrow(mentions);
    });

  it("agentLoop refuses a hand-written tool definition with a name no provider takes, before calling the model", async () => {
    const model = scriptedModel([answer]);
    const definition = { name: "read file", description: "d", input_schema: { type: "object" }, handler: () => "" };
    const error = await rejection(() => agentLoop(model, [definition], initSession("s", "u")));
    expect(isAgentError(error)).toBe(true);
    expect((error as Error).message).toMatch(/"read file"/);
    expect(model.callCount).toBe(0);
  });

  it("every run mode refuses a hand-written tool without an input_schema object at run start, naming the tool and the field", async () => {
    const slip = { name: "lookup", description: "d", inputSchema: { type: "object" }, handler: () => "" } as never;
    const expected = /tool "lookup": "input_schema" must be a JSON Schema object, not missing \(it has "inputSchema"/;
    const model = scriptedModel([answer]);
    const refusals: [string, () => Promise<unknown>][] = [
      ["agentLoop", () => agentLoop(model, [slip], initSession("s", "u"))],
      [
        "agentStream",
        async () => {
          for await (const _ of agentStream(model, [slip], initSession("s", "u"))) void _;
        },
      ],
      [
        "runAgent (the first agent)",
        () =>
          runAgent(
            { ...defineAgent({ name: "a", systemPrompt: "s", invokeModel: model }), tools: [slip] },
            initSession("s", "u"),
          ),
      ],
      [
        "runAgent (an agent handed off to later)",
        async () => {
          const later = { ...defineAgent({ name: "b", systemPrompt: "s", invokeModel: model }), tools: [slip] };
          await runAgent(
            { ...defineAgent({ name: "a", systemPrompt: "s", invokeModel: model }), handoffs: [handoff(later)] },
            initSession("s", "u"),
          );
        },
      ],
      [
        "subagentTool",
        () =>
          Promise.resolve().then(() =>
            subagentTool({ name: "sub", description: "d", invokeModel: model, systemPrompt: "s", tools: [slip] }),
          ),
      ],
      [
        "defineAgent",
        () =>
          Promise.resolve().then(() =>
            defineAgent({ name: "a", systemPrompt: "s", invokeModel: model, tools: [slip] }),
          ),
      ],
      ["agentLoop with code mode", () => agentLoop(model, [slip], initSession("s", "u"), { codeMode: true })],
      [
        "executeToolCalls",
        () => executeToolCalls([{ type: "tool_call", id: "1", name: "lookup", input: {} }], {}, { tools: [slip] }),
      ],
      ["resumeTasks", async () => resumeTasks(initSession("s", "u"), [slip])],
    ];
    for (const [mode, run] of refusals) {
      const error = await rejection(() => Promise.resolve().then(run));
      expect(isAgentError(error), `${mode}: ${String(error)}`).toBe(true);
      expect((error as Error).message, mode).toMatch(expected);
    }
    for (const schema of [null, "object", [{ type: "object" }]]) {
      const error = await rejection(() =>
        agentLoop(model, [{ name: "lookup", description: "d", input_schema: schema as never }], initSession("s", "u")),
      );
      expect((error as Error).message).toContain(
        `tool "lookup": "input_schema" must be a JSON Schema object, not ${JSON.stringify(schema)}`,
      );
    }
    expect(model.callCount).toBe(0);
  });

  it("still makes what is valid: every history kind, a returnTo handoff, a verbatim subagent tool", () => {
    for (const history of ["full", "no-tools", "summary", { lastTurns: 2 }, (messages: Message[]) => messages] as const)
      expect(handoff(target, { history, returnTo: true, toolName: "to_billing" }).toolName).toBe("to_billing");
    expect(subagentTool(target, { answer: "verbatim" }).answer).toBe("verbatim");
    expect(imagePart(new Uint8Array([1]), "image/png").mediaType).toBe("image/png");
  });
});
