import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { agentLoop, initSession, isStructuredOutputError, structuredOutput, StructuredOutputError, type AssistantMessage } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";

const Forecast = z.object({ city: z.string(), celsius: z.number() });

describe("structured output", () => {
  it("validates the final answer with a Standard Schema and stores it as plain JSON, typed by the accessor", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "w", name: "weather", input: {} }],
      [{ role: "assistant", content: '```json\n{"city":"Paris","celsius":21}\n```' }],
    ]);
    const session = await agentLoop(model, [], initSession("s", "weather in Paris?"), { toolHandlers: { weather: () => "21C" }, output: Forecast });
    const forecast = structuredOutput(session, Forecast);
    expectTypeOf(forecast).toEqualTypeOf<{ city: string; celsius: number } | undefined>();
    expect(forecast).toStrictEqual({ city: "Paris", celsius: 21 });
    expect((session.messages.at(-1) as AssistantMessage).output).toStrictEqual({ city: "Paris", celsius: 21 });
    expect(JSON.parse(JSON.stringify(session))).toStrictEqual(session);
    // The model was told the schema (in its view only: the session holds no extra system message).
    expect(model.calls[0]!.messages[0]).toMatchObject({ role: "system", content: expect.stringContaining('"celsius"') });
    expect(session.messages.filter((message) => "role" in message && message.role === "system")).toHaveLength(1);
  });

  it("sends an invalid answer back with the problems, then accepts the corrected one", async () => {
    const model = scriptedModel([
      [{ role: "assistant", content: "It is 21 degrees in Paris." }],
      [{ role: "assistant", content: '{"city":"Paris","celsius":"21"}' }],
      [{ role: "assistant", content: '{"city":"Paris","celsius":21}' }],
    ]);
    const schema = { type: "object", properties: { city: { type: "string" }, celsius: { type: "number" } }, required: ["city", "celsius"] };
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
    const error = await agentLoop(model, [], initSession("s", "u"), { output: Forecast, outputAttempts: 1 }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(StructuredOutputError);
    expect(isStructuredOutputError(error)).toBe(true);
    expect(error).toMatchObject({ text: "still no" });
  });
});
