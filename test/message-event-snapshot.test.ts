// A `message` event is the message as it entered the session: what the loop records on it later
// (a call's approval while it waits, a result held for a later call) is not in the event a
// consumer reads after the fact, just as it is not in the store's log the event is replayed from.
import { describe, expect, it } from "vitest";
import { agentStream, initSession, tool, type AgentEvent, type Message } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";

const ask = tool({
  name: "ask",
  description: "needs a human",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
  requireApproval: true,
  handler: () => "asked",
});
const echo = tool({
  name: "echo",
  description: "echoes",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
  handler: ({ text }) => `echo ${String(text)}`,
});

function messagesOf(events: readonly AgentEvent[]): Message[] {
  return events.flatMap((event) => (event.type === "message" ? [event.message] : []));
}

describe("a message event", () => {
  it("read after the run paused shows the call as it entered, without the approval recorded on it later", async () => {
    const session = initSession("You help.", "go");
    const stream = agentStream(
      scriptedModel([
        [
          { type: "tool_call", id: "c1", name: "ask", input: { text: "a" } },
          { type: "tool_call", id: "c2", name: "echo", input: { text: "b" } },
        ],
      ]),
      [ask, echo],
      session,
    );
    // A reader that takes the first event, then reads on only once the run paused: the events
    // wait in the stream meanwhile.
    const iterator = stream[Symbol.asyncIterator]();
    const events: AgentEvent[] = [];
    const first = await iterator.next();
    if (first.done !== true) events.push(first.value);
    await stream.result;
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) events.push(next.value);
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "paused" });
    const calls = messagesOf(events).filter((message) => "type" in message && message.type === "tool_call");
    expect(calls.map((call) => ("id" in call ? call.id : ""))).toStrictEqual(["c1", "c2"]);
    for (const call of calls) {
      expect(call).not.toHaveProperty("approval");
      expect(call).not.toHaveProperty("heldResult");
    }
    // The session's own calls carry what the pause recorded.
    const stored = session.messages.filter((message) => "type" in message && message.type === "tool_call");
    expect(stored[0]).toMatchObject({ approval: { status: "pending" } });
    expect(stored[1]).toMatchObject({ heldResult: { output: "echo b" } });
  });

  it("heard by a listener that keeps it shows the message as it entered", async () => {
    const session = initSession("You help.", "go");
    const heard: AgentEvent[] = [];
    const stream = agentStream(
      scriptedModel([[{ type: "tool_call", id: "c1", name: "ask", input: { text: "a" } }]]),
      [ask],
      session,
      { onEvent: (event) => heard.push(event) },
    );
    await stream.result;
    const [call] = messagesOf(heard).filter((message) => "type" in message && message.type === "tool_call");
    expect(call).toBeDefined();
    expect(call).not.toHaveProperty("approval");
  });
});
