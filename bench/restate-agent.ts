// The agent of the Restate benchmark, shared by the workers and the in-process comparison.
import { tool, type InvokeModel, type ModelMessage } from "simple-agent-loop";

export const TURNS = 10;

/** Turn k < TURNS asks for `add(k, 1)`; then the answer. Read from the session, so any worker can answer any turn. */
export const benchModel: InvokeModel = (_tools, session) => {
  let turn = 0;
  for (const message of session.messages) if ("type" in message && message.type === "tool_call") turn++;
  const answer: ModelMessage[] =
    turn < TURNS
      ? [{ type: "tool_call", id: `t${turn}`, name: "add", input: { a: turn, b: 1 }, stopReason: "tool_use" }]
      : [{ role: "assistant", content: "done", stopReason: "end_turn" }];
  return answer;
};

export const benchTools = [
  tool({
    name: "add",
    description: "Add two numbers.",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
      additionalProperties: false,
    },
    handler: (input) => Number(input.a) + Number(input.b),
  }),
];
