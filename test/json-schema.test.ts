import { describe, expect, expectTypeOf, it } from "vitest";
import { agentLoop, initSession, jsonSchema, structuredOutput, tool, type ToolResultMessage } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";

describe("jsonSchema<T>: a typed plain JSON Schema", () => {
  const readFile = jsonSchema<{ path: string; lines?: number }>({
    type: "object",
    properties: { path: { type: "string" }, lines: { type: "integer" } },
    required: ["path"],
    additionalProperties: false,
  });

  it("types a tool's input, shows the schema to the model and validates the input against it", async () => {
    const seen: unknown[] = [];
    const read = tool({
      name: "read",
      description: "Read a file.",
      inputSchema: readFile,
      handler: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ path: string; lines?: number }>();
        seen.push(input);
        return `read ${input.path}`;
      },
    });
    expect(read.input_schema).toStrictEqual(readFile.jsonSchema);
    const model = scriptedModel([
      [
        { type: "tool_call", id: "a", name: "read", input: { path: "a.txt" } },
        { type: "tool_call", id: "b", name: "read", input: { path: 3 } },
      ],
      [{ role: "assistant", content: "done" }],
    ]);
    const session = await agentLoop(model, [read], initSession("s", "u"));
    expect(model.toolsSeen[0]![0]!.input_schema).toStrictEqual(readFile.jsonSchema);
    const results = session.messages.filter(
      (message): message is ToolResultMessage => "type" in message && message.type === "tool_result",
    );
    expect(results[0]).toMatchObject({ output: "read a.txt" });
    expect(results[1]).toMatchObject({ isError: true, output: expect.stringContaining("path") as unknown });
    expect(seen).toStrictEqual([{ path: "a.txt" }]);
  });

  it("types a run's structured output", async () => {
    const answer = jsonSchema<{ ok: boolean }>({
      type: "object",
      properties: { ok: { type: "boolean" } },
      required: ["ok"],
    });
    const session = await agentLoop(
      scriptedModel([[{ role: "assistant", content: '{"ok":true}' }]]),
      [],
      initSession("s", "u"),
      { output: answer },
    );
    const value = structuredOutput(session, answer);
    expectTypeOf(value).toEqualTypeOf<{ ok: boolean } | undefined>();
    expect(value).toStrictEqual({ ok: true });
  });

  it("refuses a schema that is not an object", () => {
    expect(() => jsonSchema("nope" as never)).toThrow(/jsonSchema/);
  });
});
