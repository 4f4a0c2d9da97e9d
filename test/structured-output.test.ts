import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  agentLoop,
  initSession,
  isStructuredOutputError,
  structuredOutput,
  StructuredOutputError,
  type AssistantMessage,
  type ModelContext,
  type StructuredOutputModel,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";

const Forecast = z.object({ city: z.string(), celsius: z.number() });

describe("structured output", () => {
  it("validates the final answer with a Standard Schema and stores it as plain JSON, typed by the accessor", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "w", name: "weather", input: {} }],
      [{ role: "assistant", content: '```json\n{"city":"Paris","celsius":21}\n```' }],
    ]);
    const session = await agentLoop(model, [], initSession("s", "weather in Paris?"), {
      toolHandlers: { weather: () => "21C" },
      output: Forecast,
    });
    const forecast = structuredOutput(session, Forecast);
    expectTypeOf(forecast).toEqualTypeOf<{ city: string; celsius: number } | undefined>();
    expect(forecast).toStrictEqual({ city: "Paris", celsius: 21 });
    expect((session.messages.at(-1) as AssistantMessage).output).toStrictEqual({ city: "Paris", celsius: 21 });
    expect(JSON.parse(JSON.stringify(session))).toStrictEqual(session);
    // The model was told the schema (in its view only: the session holds no extra system message).
    expect(model.calls[0]!.messages[0]).toMatchObject({
      role: "system",
      content: expect.stringContaining('"celsius"'),
    });
    expect(session.messages.filter((message) => "role" in message && message.role === "system")).toHaveLength(1);
  });

  it("sends an invalid answer back with the problems, then accepts the corrected one", async () => {
    const model = scriptedModel([
      [{ role: "assistant", content: "It is 21 degrees in Paris." }],
      [{ role: "assistant", content: '{"city":"Paris","celsius":"21"}' }],
      [{ role: "assistant", content: '{"city":"Paris","celsius":21}' }],
    ]);
    const schema = {
      type: "object",
      properties: { city: { type: "string" }, celsius: { type: "number" } },
      required: ["city", "celsius"],
    };
    const session = await agentLoop(model, [], initSession("s", "u"), { output: schema });
    expect(model.callCount).toBe(3);
    const corrections = session.messages.filter((message) => "role" in message && message.role === "user").slice(1);
    expect(corrections.map((message) => (message as { content: string }).content)).toStrictEqual([
      expect.stringContaining("not valid JSON"),
      expect.stringContaining("celsius"),
    ]);
    expect(structuredOutput(session)).toStrictEqual({ city: "Paris", celsius: 21 });
  });

  it("throws StructuredOutputError with the raw text after the allowed attempts", async () => {
    const model = scriptedModel([[{ role: "assistant", content: "no" }], [{ role: "assistant", content: "still no" }]]);
    const error = await agentLoop(model, [], initSession("s", "u"), { output: Forecast, outputAttempts: 1 }).catch(
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(StructuredOutputError);
    expect(isStructuredOutputError(error)).toBe(true);
    expect(error).toMatchObject({ text: "still no" });
  });

  it("a model that declares native structured output gets the schema in context.output and no instruction message; its answer is still validated and corrected", async () => {
    const scripted = scriptedModel([
      [{ type: "tool_call", id: "w", name: "weather", input: {} }],
      [{ role: "assistant", content: '{"city":"Paris"}' }],
      [{ role: "assistant", content: '{"city":"Paris","celsius":21}' }],
    ]);
    const contexts: ModelContext[] = [];
    const model: StructuredOutputModel = (tools, session, context) => {
      contexts.push(context);
      return scripted(tools, session, context);
    };
    model.structuredOutput = "native";
    const session = await agentLoop(model, [], initSession("s", "weather in Paris?"), {
      toolHandlers: { weather: () => "21C" },
      output: Forecast,
    });
    // Every call saw the session as it is: its one system prompt, no instruction before it.
    expect(scripted.calls).toHaveLength(3);
    for (const seen of scripted.calls) {
      expect(seen.messages.filter((message) => "role" in message && message.role === "system")).toStrictEqual([
        { role: "system", content: "s", ts: expect.any(String) },
      ]);
      expect(JSON.stringify(seen)).not.toContain("When you give your final answer");
    }
    // The adapter is given the schema on every call, to pass to its provider.
    expect(contexts.map((context) => context.output?.jsonSchema)).toStrictEqual(
      Array(3).fill(expect.objectContaining({ type: "object", required: ["city", "celsius"] })),
    );
    // The invalid answer was still caught and sent back; the corrected one is stored as output.
    const corrections = session.messages.filter((message) => "role" in message && message.role === "user").slice(1);
    expect(corrections).toStrictEqual([
      expect.objectContaining({ content: expect.stringContaining("expected number") }),
    ]);
    expect(structuredOutput(session, Forecast)).toStrictEqual({ city: "Paris", celsius: 21 });
    expect((session.messages.at(-1) as AssistantMessage).output).toStrictEqual({ city: "Paris", celsius: 21 });
  });

  it("a native model whose answers stay invalid still ends in StructuredOutputError", async () => {
    const scripted = scriptedModel([
      [{ role: "assistant", content: "no" }],
      [{ role: "assistant", content: '{"city":1}' }],
    ]);
    const model = Object.assign((...args: Parameters<typeof scripted>) => scripted(...args), {
      structuredOutput: "native" as const,
    });
    const error = await agentLoop(model, [], initSession("s", "u"), { output: Forecast, outputAttempts: 1 }).catch(
      (thrown: unknown) => thrown,
    );
    expect(isStructuredOutputError(error)).toBe(true);
    expect(error).toMatchObject({ text: '{"city":1}' });
    expect(
      scripted.calls[1]!.messages.filter((message) => "role" in message && message.role === "system"),
    ).toHaveLength(1);
  });

  it("describes and checks a Standard Schema as tool() does: one that only has toJsonSchema (arktype) is shown as such, and problems name the field", async () => {
    const validate = (value: unknown) => {
      const celsius = (value as { celsius?: unknown }).celsius;
      return typeof celsius === "number"
        ? { value: { celsius } }
        : { issues: [{ message: "must be a number", path: [{ key: "celsius" }] }] };
    };
    const Celsius = Object.assign(
      { "~standard": { version: 1 as const, vendor: "arktype-like", validate } },
      {
        toJsonSchema: () => ({
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "object",
          properties: { celsius: { type: "number" } },
        }),
      },
    );
    const model = scriptedModel([
      [{ role: "assistant", content: '{"celsius":"21"}' }],
      [{ role: "assistant", content: '{"celsius":21}' }],
    ]);
    const session = await agentLoop(model, [], initSession("s", "u"), { output: Celsius });
    // The dialect is dropped, as for a tool's input schema.
    expect(model.calls[0]!.messages[0]).toMatchObject({
      role: "system",
      content: expect.stringContaining('{"type":"object","properties":{"celsius":{"type":"number"}}}'),
    });
    const corrections = session.messages.filter((message) => "role" in message && message.role === "user").slice(1);
    expect(corrections).toStrictEqual([
      expect.objectContaining({ content: expect.stringContaining("celsius: must be a number") }),
    ]);
    expect(structuredOutput(session)).toStrictEqual({ celsius: 21 });
    const noDescription = { "~standard": { version: 1 as const, vendor: "hand-made", validate } };
    await expect(agentLoop(model, [], initSession("s", "u"), { output: noDescription })).rejects.toThrow(
      "output: this schema cannot produce a JSON Schema; pass a JSON Schema instead",
    );
  });
});
