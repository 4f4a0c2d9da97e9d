import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  agentStream,
  GuardrailTrippedError,
  initSession,
  isGuardrailTrippedError,
  send,
  tool,
  type AgentEvent,
  type Guardrail,
  type GuardrailInput,
  type Message,
} from "simple-agent-loop";
import { closeSession, loadEntries, loadSession, openSession } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce, withoutTs } from "../helpers.ts";
import { tempDir } from "../store/helpers.ts";

const answer = (content: string) => ({ role: "assistant" as const, content });
const call = (id: string, name: string) => ({ type: "tool_call" as const, id, name, input: {} });

// A guardrail that blocks texts containing `word`, and records what it was asked.
function blocking(name: string, word: string, asked: GuardrailInput[] = []): Guardrail {
  return {
    name,
    check: (input) => {
      asked.push(input);
      return input.text?.includes(word) === true
        ? { action: "block", message: `mentions ${word}` }
        : { action: "allow" };
    },
  };
}

function guardrailEvents(events: AgentEvent[]): AgentEvent[] {
  return events.filter((event) => event.type === "guardrail");
}

describe("input guardrails", () => {
  it("block before the model is called: the user message becomes its marker, the run ends blocked", async () => {
    const model = scriptedModel([answer("never")]);
    const events: AgentEvent[] = [];
    const session = await agentLoop(model, [], initSession("s", "tell me the password"), {
      guardrails: { input: [blocking("secrets", "password")] },
      onEvent: (event) => events.push(event),
    });
    expect(model.callCount).toBe(0);
    expect(withoutTs(session)).toStrictEqual([
      { role: "system", content: "s" },
      {
        role: "user",
        content: "[blocked by secrets]",
        guardrail: { name: "secrets", action: "block", message: "mentions password" },
      },
    ]);
    expect(guardrailEvents(events)).toStrictEqual([
      { type: "guardrail", name: "secrets", kind: "input", action: "block", message: "mentions password" },
    ]);
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "blocked" });
  });

  it("check every new user message, not only the first turn, and steering as it arrives", async () => {
    const asked: GuardrailInput[] = [];
    const guardrails = { input: [blocking("secrets", "password", asked)] };
    const model = scriptedModel([answer("hello"), [call("c1", "wait")], answer("ok"), answer("never")]);
    let release: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (release = resolve));
    let finish: () => void = () => undefined;
    const wait = tool({
      name: "wait",
      description: "waits",
      inputSchema: { type: "object", properties: {} },
      handler: async () => {
        release();
        await new Promise<void>((resolve) => (finish = resolve));
        return "done";
      },
    });
    const session = await agentLoop(model, [wait], initSession("s", "hi"), { guardrails });
    expect(asked.map((input) => input.text)).toStrictEqual(["hi"]);
    send(session, "run the tool");
    const stream = agentStream(model, [wait], session, { guardrails });
    const result = stream.result;
    await started;
    stream.steer("and the password?");
    finish();
    await result;
    expect(asked.map((input) => [input.kind, input.text])).toStrictEqual([
      ["input", "hi"],
      ["input", "run the tool"],
      ["input", "and the password?"],
    ]);
    // The steering message was blocked before the next model call: the model was not called again.
    expect(model.callCount).toBe(2);
    expect(session.messages.at(-1)).toMatchObject({ role: "user", content: "[blocked by secrets]" });
    expectEveryCallAnsweredOnce(session);
  });

  it("redacts an input before the model sees it", async () => {
    const model = scriptedModel([answer("noted")]);
    const session = await agentLoop(model, [], initSession("s", "my card is 4111 1111"), {
      guardrails: {
        input: [
          {
            name: "pii",
            check: ({ text }) => ({ action: "redact", replacement: (text ?? "").replace(/\d[\d ]+\d/g, "[card]") }),
          },
        ],
      },
    });
    expect(model.calls[0]!.messages[1]).toMatchObject({ role: "user", content: "my card is [card]" });
    expect(session.messages[1]).toMatchObject({
      role: "user",
      content: "my card is [card]",
      guardrail: { name: "pii", action: "redact", replacement: "my card is [card]" },
    });
  });

  it("a guardrail that throws blocks (fail closed) unless it says failOpen", async () => {
    const throwing = (failOpen: boolean): Guardrail => ({
      name: "flaky",
      failOpen,
      check: () => {
        throw new Error("classifier down");
      },
    });
    const closed = await agentLoop(scriptedModel([answer("x")]), [], initSession("s", "hi"), {
      guardrails: { input: [throwing(false)] },
    });
    expect(closed.messages[1]).toMatchObject({
      content: "[blocked by flaky]",
      guardrail: { name: "flaky", action: "block", message: "the guardrail failed: classifier down" },
    });
    const open = await agentLoop(scriptedModel([answer("x")]), [], initSession("s", "hi"), {
      guardrails: { input: [throwing(true)] },
    });
    expect(open.messages.map((message) => ("role" in message ? message.content : ""))).toStrictEqual(["s", "hi", "x"]);
  });
});

describe("output guardrails", () => {
  it("block a final answer: its marker enters in its place, every call answered, outcome blocked", async () => {
    const model = scriptedModel([[call("c1", "lookup")], answer("the password is hunter2")]);
    const lookup = tool({
      name: "lookup",
      description: "looks up",
      inputSchema: { type: "object", properties: {} },
      handler: () => "found",
    });
    const events: AgentEvent[] = [];
    const session = await agentLoop(model, [lookup], initSession("s", "hi"), {
      guardrails: { output: [blocking("leaks", "password")] },
      onEvent: (event) => events.push(event),
    });
    expectEveryCallAnsweredOnce(session);
    expect(withoutTs(session).at(-1)).toStrictEqual({
      role: "assistant",
      content: "[blocked by leaks]",
      guardrail: { name: "leaks", action: "block", message: "mentions password" },
    });
    expect(JSON.stringify(session)).not.toContain("hunter2");
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "blocked" });
    // Only the final answer is checked, not the tool turn.
    expect(guardrailEvents(events)).toHaveLength(1);
  });

  it("throwOnBlock throws GuardrailTrippedError with the session, after run-end", async () => {
    const events: AgentEvent[] = [];
    const error: unknown = await agentLoop(scriptedModel([answer("password")]), [], initSession("s", "hi"), {
      guardrails: { output: [blocking("leaks", "password")] },
      throwOnBlock: true,
      onEvent: (event) => events.push(event),
    }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(GuardrailTrippedError);
    expect(isGuardrailTrippedError(error)).toBe(true);
    const tripped = error as GuardrailTrippedError;
    expect(tripped.guardrail).toBe("leaks");
    expect(tripped.session.messages.at(-1)).toMatchObject({ role: "assistant", content: "[blocked by leaks]" });
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "blocked" });
  });

  it("retry sends the feedback to the model and tries again, at most maxRetries times, then blocks", async () => {
    const model = scriptedModel([answer("rude 1"), answer("rude 2"), answer("rude 3"), answer("never")]);
    const events: AgentEvent[] = [];
    const session = await agentLoop(model, [], initSession("s", "hi"), {
      guardrails: {
        output: [
          {
            name: "tone",
            check: ({ text }) =>
              text?.startsWith("rude") === true ? { action: "retry", feedback: "be polite" } : { action: "allow" },
          },
        ],
      },
      onEvent: (event) => events.push(event),
    });
    expect(model.callCount).toBe(3);
    const feedback = {
      role: "user",
      content: "be polite",
      guardrail: { name: "tone", action: "retry", feedback: "be polite" },
    };
    expect(withoutTs(session).slice(2)).toStrictEqual([
      feedback,
      feedback,
      {
        role: "assistant",
        content: "[blocked by tone]",
        guardrail: { name: "tone", action: "block", message: "be polite" },
      },
    ]);
    // The model saw the feedback, never its rejected answers.
    expect(model.calls[1]!.messages.map((message) => ("role" in message ? message.content : ""))).toStrictEqual([
      "s",
      "hi",
      "be polite",
    ]);
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "blocked" });
  });

  it("retry passes once the model corrects itself", async () => {
    const model = scriptedModel([answer("rude"), answer("polite")]);
    const session = await agentLoop(model, [], initSession("s", "hi"), {
      guardrails: {
        output: [
          {
            name: "tone",
            maxRetries: 1,
            check: ({ text }) => (text === "rude" ? { action: "retry", feedback: "be polite" } : { action: "allow" }),
          },
        ],
      },
    });
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "polite" });
  });

  it("a redacted answer enters redacted; a bound store's log never holds the original", async () => {
    const directory = tempDir();
    const path = join(directory, "redact.jsonl");
    const session = await openSession(path);
    session.messages.push(...initSession("s", "hi").messages);
    await agentLoop(scriptedModel([answer("call me at 555-0100")]), [], session, {
      guardrails: {
        output: [
          {
            name: "phone",
            check: ({ text }) => ({ action: "redact", replacement: (text ?? "").replace(/555-\d+/, "[phone]") }),
          },
        ],
      },
    });
    await closeSession(session);
    const log = readFileSync(path, "utf8");
    expect(log).not.toContain("555-0100");
    expect(log).toContain("call me at [phone]");
    const loaded = await loadSession(path);
    expect(loaded.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: "call me at [phone]",
      guardrail: { name: "phone", action: "redact" },
    });
    const entries = await loadEntries(path);
    expect(entries.filter((entry) => entry.type === "guardrail")).toMatchObject([
      { type: "guardrail", name: "phone", kind: "output", action: "redact" },
    ]);
  });

  it("resumes after a block from the store: the log keeps the blocked original only in its audit entries", async () => {
    const directory = tempDir();
    const path = join(directory, "blocked.jsonl");
    const session = await openSession(path);
    session.messages.push(...initSession("s", "what is the password?").messages);
    const guardrails = { input: [blocking("secrets", "password")] };
    await agentLoop(scriptedModel([]), [], session, { guardrails });
    await closeSession(session);
    const entries = await loadEntries(path);
    expect(entries.filter((entry) => entry.type === "replace")).toMatchObject([
      {
        type: "replace",
        index: 1,
        reason: "guardrail",
        previous: { role: "user", content: "what is the password?" },
        message: { role: "user", content: "[blocked by secrets]" },
      },
    ]);
    const resumed = await openSession(path);
    expect(resumed.messages[1]).toMatchObject({ content: "[blocked by secrets]", guardrail: { action: "block" } });
    send(resumed, "what is the weather?");
    const model = scriptedModel([answer("sunny")]);
    await agentLoop(model, [], resumed, { guardrails });
    await closeSession(resumed);
    expect(
      (await loadSession(path)).messages.map((message: Message) => ("role" in message ? message.content : "")),
    ).toStrictEqual(["s", "[blocked by secrets]", "what is the weather?", "sunny"]);
  });
});
