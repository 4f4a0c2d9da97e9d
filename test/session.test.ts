import { describe, expect, it } from "vitest";
import {
  extendSession,
  forkSession,
  initSession,
  onSessionChange,
  onSessionExtend,
  response,
  send,
  type Message,
  type Session,
} from "simple-agent-loop";

const isoUtc = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("session helpers", () => {
  it("initSession creates the system and user messages with timestamps", () => {
    const session = initSession("You are terse.", "Hi");
    expect(session).toStrictEqual({
      messages: [
        { role: "system", content: "You are terse.", ts: expect.stringMatching(isoUtc) },
        { role: "user", content: "Hi", ts: expect.stringMatching(isoUtc) },
      ],
    });
  });

  it("extendSession appends in place, returns the session, and keeps a given ts", () => {
    const session = initSession("s", "u");
    const returned = extendSession(session, { role: "assistant", content: "a", ts: "2024-01-01T00:00:00.000Z" });
    expect(returned).toBe(session);
    expect(session.messages.at(-1)).toStrictEqual({ role: "assistant", content: "a", ts: "2024-01-01T00:00:00.000Z" });
  });

  it("extendSession stamps a copy and leaves the caller's message untouched", () => {
    const session: Session = { messages: [] };
    const message: Message = { type: "tool_result", id: "1", output: "ok" };
    extendSession(session, message);
    expect(message).toStrictEqual({ type: "tool_result", id: "1", output: "ok" });
    expect(session.messages[0]).toStrictEqual({
      type: "tool_result",
      id: "1",
      output: "ok",
      ts: expect.stringMatching(isoUtc),
    });
  });

  it("send adds a user message", () => {
    const session = send(initSession("s", "first"), "second");
    expect(session.messages.map((message) => ("role" in message ? [message.role, message.content] : []))).toStrictEqual(
      [
        ["system", "s"],
        ["user", "first"],
        ["user", "second"],
      ],
    );
  });

  it("forkSession is a deep copy that shares nothing", () => {
    const session = initSession("s", "u");
    extendSession(session, { type: "tool_call", id: "c1", name: "t", input: { nested: { list: [1, 2] } } });
    const fork = forkSession(session);
    expect(fork).toStrictEqual(session);
    send(fork, "only in the fork");
    const call = fork.messages[2];
    if (call !== undefined && "type" in call && call.type === "tool_call")
      (call.input.nested as { list: number[] }).list.push(3);
    expect(session.messages).toHaveLength(3);
    expect(session.messages[2]).toMatchObject({ input: { nested: { list: [1, 2] } } });
  });

  it("response returns the last assistant message, or undefined", () => {
    const session = initSession("s", "u");
    expect(response(session)).toBeUndefined();
    extendSession(session, { role: "assistant", content: "first" });
    extendSession(session, { type: "tool_call", id: "c", name: "t", input: {} });
    extendSession(session, { type: "tool_result", id: "c", output: "r" });
    extendSession(session, { role: "assistant", content: "second" });
    expect(response(session)?.content).toBe("second");
  });

  it("a session with every message kind and metadata survives a JSON round trip unchanged", () => {
    const session = initSession("s", "u");
    extendSession(session, { type: "thinking", content: "hmm", signature: "sig" });
    extendSession(session, {
      type: "tool_call",
      id: "c",
      name: "t",
      input: { a: [1, { b: null }] },
      stopReason: "tool_use",
      usage: { inputTokens: 3, outputTokens: 4 },
    });
    extendSession(session, { type: "tool_result", id: "c", output: { ok: true }, isError: false });
    extendSession(session, { role: "assistant", content: "done", stopReason: "end_turn" });
    expect(JSON.parse(JSON.stringify(session))).toStrictEqual(session);
  });

  it("onSessionExtend sees every message that enters, until unbound; forks are not bound", () => {
    const session = initSession("s", "u");
    const seen: Message[] = [];
    const unbind = onSessionExtend(session, (message) => seen.push(message));
    send(session, "one");
    const fork = forkSession(session);
    send(fork, "fork");
    unbind();
    send(session, "two");
    expect(seen).toStrictEqual([session.messages[2]]);
  });
});

describe("onSessionChange", () => {
  it("reports appends, compaction's replacements and approval updates, so a copy kept from them equals the session", async () => {
    const { agentLoop, compactSession, resolveApproval, tool } = await import("simple-agent-loop");
    const { scriptedModel } = await import("simple-agent-loop/testing");
    const session = initSession("s", "u");
    const mirror: Message[] = structuredClone(session.messages);
    const kinds: string[] = [];
    onSessionChange(session, (change) => {
      kinds.push(change.type);
      if (change.type === "append") mirror.push(structuredClone(change.message));
      else if (change.type === "splice")
        mirror.splice(change.index, change.removed.length, ...structuredClone(change.inserted));
      else if (change.type === "replace" || change.type === "update")
        mirror[change.index] = structuredClone(change.message);
    });
    const long = "x".repeat(300);
    const model = scriptedModel([
      [
        { type: "thinking", content: long, signature: "s" },
        { type: "tool_call", id: "a", name: "free", input: {} },
      ],
      [
        { type: "thinking", content: long, signature: "s" },
        { type: "tool_call", id: "b", name: "free", input: {} },
      ],
      [{ type: "tool_call", id: "c", name: "guarded", input: {} }],
      [{ role: "assistant", content: "done" }],
    ]);
    const tools = [
      tool({ name: "free", description: "d", inputSchema: { type: "object" }, handler: () => "ok" }),
      tool({
        name: "guarded",
        description: "d",
        inputSchema: { type: "object" },
        requireApproval: true,
        handler: () => "ran",
      }),
    ];
    await agentLoop(model, tools, session);
    expect(mirror).toStrictEqual(session.messages);
    resolveApproval(session, "c", { approved: true });
    await agentLoop(model, tools, session);
    compactSession(session, { keepTurns: 1 });
    expect(mirror).toStrictEqual(session.messages);
    expect(new Set(kinds)).toStrictEqual(new Set(["append", "replace", "update"]));
  });
});
