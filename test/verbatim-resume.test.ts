// A verbatim answer (`answer: "verbatim"`) given by a call answered before the turn was finished
// (before an approval pause, or before a crash) still ends the run once a later run finishes the turn.
import { describe, expect, it } from "vitest";
import { agentLoop, initSession, resolveApproval, tool } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";

const lookup = tool({
  name: "lookup",
  description: "Looks up the answer.",
  inputSchema: { type: "object", properties: {} },
  answer: "verbatim",
  handler: () => "the answer is 42",
});

const refund = tool({
  name: "refund",
  description: "Refunds.",
  inputSchema: { type: "object", properties: {} },
  requireApproval: true,
  handler: () => "refunded",
});

const call = (id: string, name: string) => ({ type: "tool_call" as const, id, name, input: {} });

describe("a verbatim answer given before the turn's other calls were answered", () => {
  it("ends the run when the turn is finished after an approval pause", async () => {
    const session = initSession("s", "q");
    const model = scriptedModel([
      [call("c1", "lookup"), call("c2", "refund")],
      [{ role: "assistant", content: "a model answer" }],
    ]);
    await agentLoop(model, [lookup, refund], session);
    expect(session.messages.find((message) => "id" in message && message.id === "c2")).toMatchObject({
      approval: { status: "pending" },
    });
    resolveApproval(session, "c2", { approved: true });
    await agentLoop(model, [lookup, refund], session);
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "the answer is 42", answerFrom: "c1" });
  });

  it("ends the run when a resumed session had the verbatim result but not the other call's", async () => {
    const session = initSession("s", "q");
    session.messages.push(call("c1", "lookup"), call("c2", "note"), {
      type: "tool_result",
      id: "c1",
      output: "the answer is 42",
    });
    const note = tool({
      name: "note",
      description: "n",
      inputSchema: { type: "object", properties: {} },
      handler: () => "noted",
    });
    const model = scriptedModel([[{ role: "assistant", content: "a model answer" }]]);
    await agentLoop(model, [lookup, note], session);
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "the answer is 42", answerFrom: "c1" });
  });
});
