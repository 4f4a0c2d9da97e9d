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
