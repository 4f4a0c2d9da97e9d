import { describe, expect, it } from "vitest";
import { agentStream, initSession, tool, type AgentEvent } from "simple-agent-loop";
import { eventStreamResponse, readEventStream } from "simple-agent-loop/http";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";
import { collect } from "./helpers.ts";

/** A streamed text turn, then a tool call, then an answer: every kind of event a page renders. */
function model() {
  return scriptedModel(
    [
      [
        { role: "assistant", content: "Let me add." },
        { type: "tool_call", id: "c1", name: "add", input: { a: 1, b: 2 } },
      ],
      [{ role: "assistant", content: "It is 3, as\nexpected." }],
    ],
    { stream: true },
  );
}

const add = tool({
  name: "add",
  description: "adds",
  inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
  handler: ({ a, b }) => Number(a) + Number(b),
});

describe("eventStreamResponse and readEventStream", () => {
  it("send the run's events as SSE with an id each and read back the very events the stream yields", async () => {
    const expected = await collect(agentStream(model(), [add], initSession("s", "u")));
    const response = eventStreamResponse(agentStream(model(), [add], initSession("s", "u")));
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const text = await response.text();
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
    expect(ids).toStrictEqual(expected.map((_, index) => index + 1));
    const read = await collect(readEventStream(new Response(text)));
    // Durations and timestamps differ between two runs; the sequence of kinds and texts does not.
    const shape = (event: AgentEvent) => ({ type: event.type, ...("delta" in event ? { delta: event.delta } : {}) });
    expect(read.map(shape)).toStrictEqual(expected.map(shape));
    expect(read.at(-1)).toMatchObject({ type: "run-end", outcome: "done" });
    expect(read.filter((event) => event.type === "text-delta").length).toBeGreaterThan(2);
  });

  it("reads from a body stream and reports each id", async () => {
    const ids: string[] = [];
    const response = eventStreamResponse(agentStream(model(), [add], initSession("s", "u")));
    const events = await collect(readEventStream(response.body!, { onId: (id) => ids.push(id) }));
    expect(ids).toHaveLength(events.length);
    expect(ids.at(-1)).toBe(String(events.length));
  });

  it("aborts the run when the client goes away (the session stays valid), unless detached", async () => {
    const slow = scriptedModel([
      [{ type: "tool_call", id: "c1", name: "add", input: { a: 1, b: 2 } }],
      { delay: 60_000, messages: [{ role: "assistant", content: "never" }] },
    ]);
    const session = initSession("s", "u");
    const stream = agentStream(slow, [add], session);
    const response = eventStreamResponse(stream);
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    await stream.result;
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
    expectEveryCallAnsweredOnce(session);

    const detachedSession = initSession("s", "u");
    const detached = agentStream(model(), [add], detachedSession);
    const controller = new AbortController();
    const detachedResponse = eventStreamResponse(detached, { detach: true, signal: controller.signal });
    controller.abort();
    await detachedResponse.body!.cancel();
    await detached.result;
    expect(detachedSession.messages.at(-1)).toMatchObject({ role: "assistant", content: "It is 3, as\nexpected." });
  });

  it("a request signal that aborts counts as the client going away", async () => {
    const session = initSession("s", "u");
    const stream = agentStream(scriptedModel([{ delay: 60_000, messages: [] }]), [], session);
    const controller = new AbortController();
    const response = eventStreamResponse(stream, { signal: controller.signal });
    void response.body!.getReader().read();
    controller.abort();
    await stream.result;
    expect(session.messages.at(-1)).toMatchObject({ stopReason: "aborted" });
  });

  it("a client that does not read holds at most maxBufferedBytes of deltas; messages and run-end always arrive", async () => {
    const long = "word ".repeat(20_000);
    const session = initSession("s", "u");
    const stream = agentStream(scriptedModel([[{ role: "assistant", content: long }]], { stream: true }), [], session);
    const response = eventStreamResponse(stream, { maxBufferedBytes: 10_000 });
    await stream.result;
    const text = await response.text();
    expect(text.length).toBeLessThan(long.length + 30_000);
    const events = await collect(readEventStream(new Response(text)));
    const deltas = events.filter((event) => event.type === "text-delta");
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.length).toBeLessThan(20_000);
    expect(
      events.find((event) => event.type === "message" && "role" in event.message && event.message.role === "assistant"),
    ).toMatchObject({ message: { content: long } });
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "done" });
  });

  it("readEventStream throws the server's message for an error answer, and for a stream cut before run-end", async () => {
    const refused = new Response(JSON.stringify({ error: "no such session" }), { status: 404 });
    await expect(collect(readEventStream(refused))).rejects.toThrow("the server answered 404: no such session");
    const cut = new Response('id: 1\ndata: {"type":"run-start"}\n\n');
    await expect(collect(readEventStream(cut))).rejects.toThrow("ended before run-end");
  });
});
