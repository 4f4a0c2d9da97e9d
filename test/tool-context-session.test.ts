import { describe, expect, it } from "vitest";
import { agentLoop, initSession, tool, type Message, type ModelMessage } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";

// What `context.session` holds for a handler, by how the call started (documented on ToolContext.session).
function recordingTool(eager?: false) {
  const seen: Message[][] = [];
  const look = tool({
    name: "look",
    description: "l",
    inputSchema: { type: "object" },
    ...(eager === undefined ? {} : { eager }),
    handler: (_input, context) => (seen.push([...context.session.messages]), "ok"),
  });
  return { look, seen };
}

const turn: ModelMessage[] = [
  { role: "assistant", content: "Looking." },
  { type: "tool_call", id: "c1", name: "look", input: {} },
];
const kinds = (messages: readonly Message[]): string[] =>
  messages.map((message) => ("role" in message ? message.role : message.type));

describe("a tool's context.session, by how its call started", () => {
  it("a call started early from a streamed answer sees the session before its turn", async () => {
    const { look, seen } = recordingTool();
    await agentLoop(
      scriptedModel([turn, [{ role: "assistant", content: "done" }]], { stream: true }),
      [look],
      initSession("s", "u"),
    );
    expect(seen.map(kinds)).toStrictEqual([["system", "user"]]);
  });

  for (const [name, stream, eager] of [
    ["an answer given as an array", false, undefined],
    ["a streamed answer to a tool with eager: false", true, false],
  ] as const) {
    it(`a call started once the turn is complete (${name}) sees the turn, its own call included`, async () => {
      const { look, seen } = recordingTool(eager);
      await agentLoop(
        scriptedModel([turn, [{ role: "assistant", content: "done" }]], { stream }),
        [look],
        initSession("s", "u"),
      );
      expect(seen.map(kinds)).toStrictEqual([["system", "user", "assistant", "tool_call"]]);
    });
  }
});

describe("a tool's context.turn: the same view however its call started", () => {
  const twoCalls: ModelMessage[] = [
    { role: "assistant", content: "Looking twice." },
    { type: "tool_call", id: "c1", name: "first", input: { n: 1 } },
    { type: "tool_call", id: "c2", name: "second", input: { n: 2 } },
  ];
  for (const [name, stream, eager] of [
    ["started early from a streamed answer", true, undefined],
    ["started once an array answer is complete", false, undefined],
    ["a streamed answer to tools with eager: false", true, false],
  ] as const) {
    it(`${name}: each call sees the turn's calls up to and including its own`, async () => {
      const seen = new Map<string, string[]>();
      const recording = (toolName: string) =>
        tool({
          name: toolName,
          description: toolName,
          inputSchema: { type: "object" },
          ...(eager === undefined ? {} : { eager }),
          handler: (_input, context) => {
            expect(context.turn.at(-1)?.id).toBe(context.id);
            seen.set(
              context.id,
              context.turn.map((call) => `${call.id}:${call.name}:${JSON.stringify(call.input)}`),
            );
            return "ok";
          },
        });
      await agentLoop(
        scriptedModel([twoCalls, [{ role: "assistant", content: "done" }]], { stream }),
        [recording("first"), recording("second")],
        initSession("s", "u"),
      );
      expect(Object.fromEntries(seen)).toStrictEqual({
        c1: ['c1:first:{"n":1}'],
        c2: ['c1:first:{"n":1}', 'c2:second:{"n":2}'],
      });
    });
  }
});
