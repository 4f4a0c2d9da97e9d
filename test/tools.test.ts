import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  agentLoop,
  ApprovalPause,
  executeToolCalls,
  initSession,
  tool,
  toolSchemas,
  type AgentEvent,
  type StandardSchemaV1,
  type ToolCallMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { addSchema, sleep, withoutTs, withoutClock } from "./helpers.ts";

const addTool = () => tool({ name: "add", description: "Add.", inputSchema: addSchema.input_schema, handler: () => 0 });
const call = (id: string, name: string, input: Record<string, unknown>): ToolCallMessage =>
  ({ type: "tool_call", id, name, input }) as ToolCallMessage;

describe("tool()", () => {
  it("refuses options without an input schema or without a handler (a caller without types), naming the tool", () => {
    const handler = (): string => "ok";
    const withoutSchema: unknown = { name: "no_schema", description: "", handler };
    const withoutHandler: unknown = { name: "no_handler", description: "", inputSchema: { type: "object" } };
    expect(() => tool(withoutSchema as Parameters<typeof tool>[0])).toThrow(
      new TypeError('tool "no_schema": an input schema (inputSchema) is required'),
    );
    expect(() => tool(withoutHandler as Parameters<typeof tool>[0])).toThrow(
      new TypeError('tool "no_handler": a handler function is required'),
    );
  });

  it("with a zod schema: infers the input type, shows the model a JSON Schema, validates and transforms", async () => {
    const weather = tool({
      name: "get_weather",
      description: "Current weather for a city.",
      inputSchema: z.object({ city: z.string().min(1), unit: z.enum(["c", "f"]).default("c") }),
      handler: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ city: string; unit: "c" | "f" }>();
        return `${input.city}: 20°${input.unit.toUpperCase()}`;
      },
    });
    expect(toolSchemas([weather])).toStrictEqual([
      {
        name: "get_weather",
        description: "Current weather for a city.",
        input_schema: {
          type: "object",
          properties: {
            city: { type: "string", minLength: 1 },
            unit: { type: "string", enum: ["c", "f"], default: "c" },
          },
          required: ["city"],
        },
      },
    ]);
    const results = await executeToolCalls(
      [
        call("1", "get_weather", { city: "Tokyo" }),
        call("2", "get_weather", { city: "" }),
        call("3", "get_weather", {}),
      ],
      {},
      { tools: [weather] },
    );
    expect(results[0]).toStrictEqual({ type: "tool_result", id: "1", output: "Tokyo: 20°C" });
    expect(results[1]).toMatchObject({
      isError: true,
      output: expect.stringMatching(/^Error: invalid input for tool "get_weather": city: /),
    });
    expect(results[2]).toMatchObject({ isError: true, output: expect.stringContaining("city") });
  });

  it("accepts any Standard Schema; one without a JSON Schema of its own needs `jsonSchema`", async () => {
    const evenOnly: StandardSchemaV1<{ n: number }> = {
      "~standard": {
        version: 1,
        vendor: "hand-made",
        validate: (value) => {
          const n = (value as { n?: unknown }).n;
          return typeof n === "number" && n % 2 === 0
            ? { value: { n } }
            : { issues: [{ message: "must be even", path: ["n"] }] };
        },
      },
    };
    expect(() => tool({ name: "even", description: "d", inputSchema: evenOnly, handler: () => "" })).toThrow(
      /pass one as `jsonSchema`/,
    );
    const even = tool({
      name: "even",
      description: "Halve an even number.",
      inputSchema: evenOnly,
      jsonSchema: { type: "object", properties: { n: { type: "integer" } } },
      handler: (input) => input.n / 2,
    });
    const results = await executeToolCalls(
      [call("a", "even", { n: 4 }), call("b", "even", { n: 3 })],
      {},
      { tools: [even] },
    );
    expect(results).toStrictEqual([
      { type: "tool_result", id: "a", output: 2 },
      { type: "tool_result", id: "b", output: 'Error: invalid input for tool "even": n: must be even', isError: true },
    ]);
  });

  it("a tool() with a JSON Schema is validated against it, and runs in the loop without toolHandlers", async () => {
    const add = tool({
      name: "add",
      description: "Add.",
      inputSchema: addSchema.input_schema,
      handler: (input) => Number(input.a) + Number(input.b),
    });
    const model = scriptedModel([
      [call("x", "add", { a: 2, b: "3" })],
      [call("y", "add", { a: 2, b: 3 })],
      [{ role: "assistant", content: "5" }],
    ]);
    const session = await agentLoop(model, [add], initSession("s", "u"));
    expect(withoutTs(session)[3]).toMatchObject({ id: "x", isError: true, output: expect.stringContaining("b: ") });
    expect(withoutTs(session)[5]).toStrictEqual({ type: "tool_result", id: "y", output: 5 });
    // The model is shown the schema only, never the handler.
    expect(model.toolsSeen[0]).toStrictEqual([
      { name: "add", description: "Add.", input_schema: addSchema.input_schema },
    ]);
  });

  it("two tools of one name are refused before the model is called, the session untouched", async () => {
    const named = (handler: () => string) =>
      tool({ name: "search", description: "Search.", inputSchema: { type: "object", properties: {} }, handler });
    const model = scriptedModel([[{ role: "assistant", content: "never" }]]);
    const session = initSession("s", "u");
    await expect(agentLoop(model, [named(() => "web"), addTool(), named(() => "docs")], session)).rejects.toMatchObject(
      {
        name: "AgentError",
        message: expect.stringMatching(/^two tools are named "search"/),
      },
    );
    expect(model.toolsSeen).toStrictEqual([]);
    expect(withoutTs(session)).toStrictEqual(withoutTs(initSession("s", "u")));
  });

  it("also takes `input_schema` and `execute`, with the same inference", async () => {
    const shout = tool({
      name: "shout",
      description: "Upper-case a text.",
      input_schema: z.object({ text: z.string() }),
      execute: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ text: string }>();
        return input.text.toUpperCase();
      },
    });
    const [result] = await executeToolCalls([call("1", "shout", { text: "hi" })], {}, { tools: [shout] });
    expect(result).toStrictEqual({ type: "tool_result", id: "1", output: "HI" });
  });

  it("toolSchemas keeps provider fields of plain schemas", () => {
    const cached = { ...addSchema, cache_control: { type: "ephemeral" } };
    expect(toolSchemas([cached])).toStrictEqual([cached]);
  });
});

describe("executeToolCalls", () => {
  it("returns one result per call in call order, using a plain toolHandlers map", async () => {
    const results = await executeToolCalls([call("1", "upper", { text: "a" }), call("2", "upper", { text: "b" })], {
      upper: async (input: { text: string }) => {
        await sleep(input.text === "a" ? 20 : 0);
        return input.text.toUpperCase();
      },
    });
    expect(results).toStrictEqual([
      { type: "tool_result", id: "1", output: "A" },
      { type: "tool_result", id: "2", output: "B" },
    ]);
  });

  it("validates nested fields and names them in the message", async () => {
    const schema = {
      name: "order",
      description: "Place an order.",
      input_schema: {
        type: "object",
        properties: {
          items: {
            type: "array",
            items: {
              type: "object",
              properties: { sku: { type: "string" }, qty: { type: "integer", minimum: 1 } },
              required: ["sku", "qty"],
            },
          },
        },
        required: ["items"],
        additionalProperties: false,
      },
    };
    let called = false;
    const [result] = await executeToolCalls(
      [call("o", "order", { items: [{ sku: "x", qty: 0 }], extra: true })],
      { order: () => (called = true) },
      { tools: [schema] },
    );
    expect(called).toBe(false);
    expect(result?.output).toMatch(/items\[0\]\.qty: .*1/);
    expect(result?.output).toMatch(/extra/);
  });

  it("reports start and end events for every call, including failures", async () => {
    const events: AgentEvent[] = [];
    await executeToolCalls(
      [call("1", "ok", {}), call("2", "missing", {})],
      { ok: () => "fine" },
      { onEvent: (event) => events.push(event) },
    );
    const seen = events.map((event) => `${event.type}:${"id" in event ? event.id : ""}`);
    expect([...seen].sort()).toStrictEqual([
      "tool-execution-end:1",
      "tool-execution-end:2",
      "tool-execution-start:1",
      "tool-execution-start:2",
    ]);
    for (const id of ["1", "2"])
      expect(seen.indexOf(`tool-execution-start:${id}`)).toBeLessThan(seen.indexOf(`tool-execution-end:${id}`));
    const end = events.find((event) => event.type === "tool-execution-end" && event.id === "2");
    expect(end).toMatchObject({ result: { isError: true, output: expect.stringContaining('unknown tool "missing"') } });
  });

  it("a per-tool timeout wins over the loop's and aborts the handler's signal", async () => {
    let aborted = false;
    const slow = tool({
      name: "slow",
      description: "Slow.",
      inputSchema: { type: "object" },
      timeout: 30,
      handler: (_input, context) =>
        new Promise((resolve) => {
          context.signal.addEventListener("abort", () => {
            aborted = true;
            resolve("late");
          });
        }),
    });
    const [result] = await executeToolCalls([call("s", "slow", {})], {}, { tools: [slow], toolTimeout: 60_000 });
    expect(result).toStrictEqual({
      type: "tool_result",
      id: "s",
      output: 'Error: tool "slow" timed out after 30 ms',
      isError: true,
    });
    expect(aborted).toBe(true);
  });

  it("writes each error result with its exact text, call by call", async () => {
    const gated = tool({
      name: "gated",
      description: "d",
      inputSchema: {},
      requireApproval: true,
      handler: () => "ran",
    });
    const pausing = tool({
      name: "pausing",
      description: "d",
      inputSchema: {},
      handler: () => {
        throw new ApprovalPause({ messages: [] });
      },
    });
    const denied: ToolCallMessage = { ...call("d", "gated", {}), approval: { status: "denied" } };
    const results = await executeToolCalls(
      [call("g", "gated", {}), call("p", "pausing", {}), denied, call("u", "nope", {})],
      {},
      { tools: [gated, pausing] },
    );
    expect(results.map(withoutClock)).toStrictEqual([
      {
        type: "tool_result",
        id: "g",
        output: 'Error: tool "gated" needs approval; run it through agentLoop to pause for it.',
        isError: true,
      },
      {
        type: "tool_result",
        id: "p",
        output: "Error: the tool paused for approval, but nothing in its session waits for a decision",
        isError: true,
      },
      { type: "tool_result", id: "d", output: "Rejected: the call was not approved", isError: true },
      {
        type: "tool_result",
        id: "u",
        output: 'Error: unknown tool "nope". Available tools: gated, pausing.',
        isError: true,
      },
    ]);
    const aborted = await executeToolCalls(
      [call("a", "add", { a: 1, b: 2 })],
      { add: () => 3 },
      { signal: AbortSignal.abort() },
    );
    expect(aborted).toStrictEqual([
      { type: "tool_result", id: "a", output: "Error: aborted before the tool finished", isError: true },
    ]);
    const model = scriptedModel([[{ type: "tool_call", id: "cut", name: "add", input: {}, stopReason: "max_tokens" }]]);
    const session = await agentLoop(model, [], initSession("s", "u"), { toolHandlers: { add: () => 0 } });
    expect(withoutTs(session).at(-1)).toStrictEqual({
      type: "tool_result",
      id: "cut",
      output:
        'Error: not executed: the response stopped with "max_tokens" instead of asking for tool use, so this call may be incomplete.',
      isError: true,
    });
  });
});
