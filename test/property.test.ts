import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  executeToolCalls,
  initSession,
  isMaxIterationsError,
  type ModelMessage,
  type Session,
  type StopReason,
  type ToolCallMessage,
  type ToolSchema,
} from "simple-agent-loop";
import { scriptedModel, type ScriptedTurn } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

const schemas: ToolSchema[] = ["ok", "fail", "slow", "deaf"].map((name) => ({
  name,
  description: name,
  input_schema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
}));

const handlers = {
  ok: (input: { n: number }) => `ok ${input.n}`,
  fail: (input: { n: number }) => {
    throw new Error(`failed ${input.n}`);
  },
  slow: (input: { n: number }, context: { signal: AbortSignal }) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve(`slow ${input.n}`), input.n % 6);
      context.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(new Error("stopped"));
      });
    }),
  // Ignores its signal and sometimes never settles: only the timeout or the abort frees the run.
  deaf: (input: { n: number }) => (input.n % 2 === 0 ? new Promise(() => undefined) : `deaf ${input.n}`),
};

const toolCall = fc.record({
  name: fc.constantFrom("ok", "fail", "slow", "deaf", "missing"),
  n: fc.oneof(fc.integer({ min: 0, max: 20 }), fc.constant("not a number")),
});

const turn = fc.record({
  calls: fc.array(toolCall, { maxLength: 4 }),
  text: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
  thinking: fc.option(fc.string({ maxLength: 200 }), { nil: undefined }),
  stopReason: fc.constantFrom<StopReason | undefined>(undefined, undefined, "tool_use", "max_tokens"),
  delay: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
  fails: fc.integer({ min: 0, max: 9 }).map((roll) => roll === 0),
  stream: fc.boolean(),
});

type TurnSpec = typeof turn extends fc.Arbitrary<infer T> ? T : never;

const run = fc.record({
  turns: fc.array(turn, { minLength: 1, maxLength: 6 }),
  abortAfter: fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }),
  maxIterations: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
  parallel: fc.boolean(),
  maxParallelTools: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
});

function script(turns: TurnSpec[]): ScriptedTurn[] {
  let id = 0;
  const scripted: ScriptedTurn[] = turns.map((spec) => {
    const messages: ModelMessage[] = [];
    if (spec.thinking !== undefined) messages.push({ type: "thinking", content: spec.thinking, signature: "sig" });
    if (spec.text !== undefined) messages.push({ role: "assistant", content: spec.text });
    for (const call of spec.calls) {
      messages.push({ type: "tool_call", id: `call_${id++}`, name: call.name, input: { n: call.n } });
    }
    const last = messages.at(-1);
    if (last !== undefined && spec.stopReason !== undefined)
      messages[messages.length - 1] = { ...last, stopReason: spec.stopReason };
    return {
      messages,
      stream: spec.stream,
      ...(spec.delay === undefined ? {} : { delay: spec.delay }),
      ...(spec.fails ? { error: new Error("model failed") } : {}),
    };
  });
  // The model always ends by answering, if the run gets that far.
  scripted.push([{ role: "assistant", content: "final" }]);
  return scripted;
}

describe("property: whatever happens, the session stays valid", () => {
  it("random runs with tool failures, delays, aborts and limits: every call answered once, in call order, JSON-clean", async () => {
    await fc.assert(
      fc.asyncProperty(run, async (spec) => {
        const session: Session = initSession("s", "u");
        const controller = new AbortController();
        const timer = spec.abortAfter === undefined ? undefined : setTimeout(() => controller.abort(), spec.abortAfter);
        let outcome: "returned" | "max-iterations" | "model-error" = "returned";
        try {
          await agentLoop(scriptedModel(script(spec.turns)), schemas, session, {
            toolHandlers: handlers,
            signal: controller.signal,
            toolTimeout: 15,
            parallel: spec.parallel,
            ...(spec.maxIterations === undefined ? {} : { maxIterations: spec.maxIterations }),
            ...(spec.maxParallelTools === undefined ? {} : { maxParallelTools: spec.maxParallelTools }),
          });
        } catch (error) {
          if (isMaxIterationsError(error)) outcome = "max-iterations";
          else if (error instanceof Error && error.message === "model failed") outcome = "model-error";
          else throw error;
        } finally {
          clearTimeout(timer);
        }

        expectEveryCallAnsweredOnce(session);
        const callIds = session.messages.flatMap((message) =>
          "type" in message && message.type === "tool_call" ? [message.id] : [],
        );
        const resultIds = session.messages.flatMap((message) =>
          "type" in message && message.type === "tool_result" ? [message.id] : [],
        );
        expect(resultIds).toStrictEqual(callIds);
        expect(JSON.parse(JSON.stringify(session))).toStrictEqual(session);
        const last = session.messages.at(-1);
        if (
          outcome === "returned" &&
          controller.signal.aborted &&
          last !== undefined &&
          "stopReason" in last &&
          last.stopReason === "aborted"
        ) {
          expect(last).toMatchObject({ role: "assistant", content: "" });
        }
        if (outcome === "max-iterations") expect(spec.maxIterations).toBeDefined();
      }),
      { numRuns: 150 },
    );
  });

  it("executeToolCalls returns exactly one result per call, in call order, for any mix of calls", async () => {
    // Only the deaf tool's never-settling calls are the timeout's subject: the slow tool gets a
    // timeout no loaded machine reaches, so whether it succeeds never depends on the scheduler.
    const tools = schemas.map((schema) =>
      schema.name === "slow" ? { ...schema, handler: handlers.slow, timeout: 60_000 } : schema,
    );
    await fc.assert(
      fc.asyncProperty(fc.array(toolCall, { maxLength: 8 }), fc.boolean(), async (calls, parallel) => {
        const toolCalls: ToolCallMessage[] = calls.map((call, index) => ({
          type: "tool_call",
          id: `c${index}`,
          name: call.name,
          input: { n: call.n },
        }));
        const results = await executeToolCalls(toolCalls, handlers, { tools, parallel, toolTimeout: 10 });
        expect(results.map((result) => result.id)).toStrictEqual(toolCalls.map((call) => call.id));
        results.forEach((result, index) => {
          const call = calls[index]!;
          const valid = typeof call.n === "number" && call.name !== "missing";
          if (!valid || call.name === "fail" || (call.name === "deaf" && (call.n as number) % 2 === 0))
            expect(result.isError).toBe(true);
          else expect(result.isError).toBeUndefined();
        });
      }),
      { numRuns: 100 },
    );
  });
});

describe("property: the fast path for flat object schemas agrees with the full JSON Schema validator", () => {
  const primitive = fc.constantFrom("string", "number", "integer", "boolean", "null");
  const property = fc.record(
    {
      type: primitive,
      enum: fc.array(
        fc.oneof(fc.string({ maxLength: 2 }), fc.integer({ min: -2, max: 2 }), fc.boolean(), fc.constant(null)),
        { minLength: 1, maxLength: 3 },
      ),
      description: fc.string({ maxLength: 5 }),
    },
    { requiredKeys: ["type"] },
  );
  const schema = fc.dictionary(fc.constantFrom("a", "b", "c", "d"), property, { maxKeys: 4 }).chain((properties) =>
    fc.record({
      type: fc.constant("object"),
      properties: fc.constant(properties),
      required: fc.subarray([...Object.keys(properties), "zz"]),
      additionalProperties: fc.boolean(),
    }),
  );
  const value = fc.oneof(
    fc.string({ maxLength: 2 }),
    fc.integer({ min: -2, max: 2 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.integer(), { maxLength: 1 }),
  );
  const input = fc.oneof(fc.dictionary(fc.constantFrom("a", "b", "c", "d", "e"), value, { maxKeys: 5 }), value);

  it("accepts and rejects exactly what @cfworker/json-schema does", async () => {
    const { Validator } = await import("@cfworker/json-schema");
    const { validateToolInput } = await import("../src/tools/validate-input.ts");
    fc.assert(
      fc.property(schema, input, (inputSchema, candidate) => {
        const expected = new Validator(inputSchema, "2020-12", false).validate(candidate).valid;
        const actual = validateToolInput({ name: "t", description: "", input_schema: inputSchema }, candidate);
        expect("then" in actual ? undefined : actual.ok).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("property: compaction's quick length bound never under-counts", () => {
  it("jsonLengthAtMost(value, limit) implies JSON.stringify(value).length <= limit", async () => {
    const { jsonLengthAtMost } = await import("../src/loop/compaction.ts");
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.integer({ min: 0, max: 300 }), (value, limit) => {
        if (jsonLengthAtMost(value as never, limit)) expect(JSON.stringify(value).length).toBeLessThanOrEqual(limit);
      }),
      { numRuns: 3000 },
    );
  });
});
