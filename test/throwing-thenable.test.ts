import { describe, expect, it } from "vitest";
import { agentLoop, executeToolCalls, initSession, tool } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";

// A handler's answer that looks like a promise but whose `then` throws: the call still gets its one result.
const odd = tool({
  name: "odd",
  description: "Answers with a broken thenable.",
  inputSchema: { type: "object", properties: {} },
  handler: () => ({
    then() {
      throw new Error("broken thenable");
    },
  }),
});

describe("a handler answering with a thenable whose then throws", () => {
  it("answers the call with an error result (executeToolCalls)", async () => {
    const results = await executeToolCalls(
      [{ type: "tool_call", id: "c1", name: "odd", input: {} }],
      {},
      { tools: [odd] },
    );
    expect(results).toMatchObject([{ id: "c1", isError: true }]);
  });

  it("answers the call with an error result and the run goes on (agentLoop)", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "c1", name: "odd", input: {} }],
      [{ role: "assistant", content: "done" }],
    ]);
    const session = await agentLoop(model, [odd], initSession("s", "u"));
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "done" });
  });
});
