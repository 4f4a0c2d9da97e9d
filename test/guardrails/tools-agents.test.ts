import { describe, expect, it } from "vitest";
import {
  agentLoop,
  defineAgent,
  extendSession,
  initSession,
  runAgent,
  subagentTool,
  tool,
  type AgentRunEvent,
  type Guardrail,
  type GuardrailInput,
  type Message,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce, withoutTs } from "../helpers.ts";

const answer = (content: string) => ({ role: "assistant" as const, content });

function echoTool(ran: unknown[]) {
  return tool({
    name: "echo",
    description: "echoes",
    inputSchema: { type: "object", properties: { text: { type: "string" } } },
    handler: (input: { text?: string }) => {
      ran.push(input);
      return `echo: ${input.text ?? ""}`;
    },
  });
}

const echoCall = (id: string, text: string) => ({ type: "tool_call" as const, id, name: "echo", input: { text } });

// The results without their clock readings (`ts`, and `waitMs`: a guardrail's check is time the call waited).
function results(messages: readonly Message[]): Message[] {
  return messages.flatMap((message) => {
    if (!("type" in message) || message.type !== "tool_result") return [];
    const { ts: _ts, waitMs: _waitMs, ...rest } = message;
    return [rest];
  });
}

describe("tool guardrails", () => {
  it("toolInput: a block answers the call with an error carrying the message, the tool never runs, the run goes on", async () => {
    const ran: unknown[] = [];
    const asked: GuardrailInput[] = [];
    const noDelete: Guardrail = {
      name: "no-delete",
      check: (input) => {
        asked.push(input);
        return input.toolCall?.input.text === "rm -rf"
          ? { action: "block", message: "destructive" }
          : { action: "allow" };
      },
    };
    const model = scriptedModel([[echoCall("c1", "rm -rf"), echoCall("c2", "ls")], answer("done")]);
    const session = await agentLoop(model, [echoTool(ran)], initSession("s", "hi"), {
      guardrails: { toolInput: [noDelete] },
    });
    expect(ran).toStrictEqual([{ text: "ls" }]);
    expect(results(session.messages)).toStrictEqual([
      {
        type: "tool_result",
        id: "c1",
        output: "[blocked by no-delete] destructive",
        isError: true,
        guardrail: { name: "no-delete", action: "block", message: "destructive" },
      },
      { type: "tool_result", id: "c2", output: "echo: ls" },
    ]);
    expect(asked.map((input) => [input.kind, input.toolCall?.id, input.text])).toStrictEqual([
      ["toolInput", "c1", '{"text":"rm -rf"}'],
      ["toolInput", "c2", '{"text":"ls"}'],
    ]);
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "done" });
    expectEveryCallAnsweredOnce(session);
  });

  it("toolInput: a redact to a JSON object runs the tool with that input", async () => {
    const ran: unknown[] = [];
    const model = scriptedModel([[echoCall("c1", "my ssn 123-45-6789")], answer("done")]);
    const session = await agentLoop(model, [echoTool(ran)], initSession("s", "hi"), {
      guardrails: {
        toolInput: [
          {
            name: "ssn",
            check: ({ text = "" }) => ({ action: "redact", replacement: text.replace(/\d{3}-\d{2}-\d{4}/, "[ssn]") }),
          },
        ],
      },
    });
    expect(ran).toStrictEqual([{ text: "my ssn [ssn]" }]);
    expect(session.messages[2]).toMatchObject({ type: "tool_call", input: { text: "my ssn [ssn]" } });
  });

  it("toolOutput: a block replaces the result with an error carrying the message; a redact replaces the output", async () => {
    const ran: unknown[] = [];
    const model = scriptedModel([[echoCall("c1", "password hunter2"), echoCall("c2", "email a@b.c")], answer("done")]);
    const session = await agentLoop(model, [echoTool(ran)], initSession("s", "hi"), {
      guardrails: {
        toolOutput: [
          {
            name: "secrets",
            check: ({ text = "", result }) =>
              text.includes("hunter2")
                ? { action: "block", message: `result ${result?.id ?? "?"} holds a password` }
                : { action: "allow" },
          },
          {
            name: "emails",
            check: ({ text = "" }) =>
              text.includes("@")
                ? { action: "redact", replacement: text.replace(/\S+@\S+/, "[email]") }
                : { action: "allow" },
          },
        ],
      },
    });
    expect(results(session.messages)).toStrictEqual([
      {
        type: "tool_result",
        id: "c1",
        output: "[blocked by secrets] result c1 holds a password",
        isError: true,
        guardrail: { name: "secrets", action: "block", message: "result c1 holds a password" },
      },
      {
        type: "tool_result",
        id: "c2",
        output: "echo: email [email]",
        guardrail: { name: "emails", action: "redact", replacement: "echo: email [email]" },
      },
    ]);
    expect(JSON.stringify(results(session.messages))).not.toContain("hunter2");
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "done" });
  });
});

describe("guardrails of agents", () => {
  it("a handoff's target checks the input it receives with its own input guardrails; run-level ones apply to every agent", async () => {
    const targetAsked: GuardrailInput[] = [];
    const runAsked: GuardrailInput[] = [];
    const refundsModel = scriptedModel([answer("never")]);
    const refunds = defineAgent({
      name: "refunds",
      systemPrompt: "You handle refunds.",
      invokeModel: refundsModel,
      guardrails: {
        input: [
          {
            name: "no-fraud",
            check: (input) => {
              targetAsked.push(input);
              return input.text?.includes("twice") === true
                ? { action: "block", message: "refund fraud pattern" }
                : { action: "allow" };
            },
          },
        ],
      },
    });
    const triage = defineAgent({
      name: "triage",
      systemPrompt: "Route.",
      invokeModel: scriptedModel([[{ type: "tool_call", id: "h1", name: "transfer_to_refunds", input: {} }]]),
      handoffs: [refunds],
    });
    const events: AgentRunEvent[] = [];
    const session = await runAgent(triage, initSession("Support.", "refund me twice"), {
      guardrails: {
        input: [
          {
            name: "logged",
            check: (input) => {
              runAsked.push(input);
              return { action: "allow" };
            },
          },
        ],
      },
      onEvent: (event) => events.push(event),
    });
    expect(runAsked.map((input) => [input.text, input.agent])).toStrictEqual([["refund me twice", "triage"]]);
    expect(targetAsked.map((input) => [input.kind, input.text, input.agent])).toStrictEqual([
      ["input", "refund me twice", "refunds"],
    ]);
    expect(refundsModel.callCount).toBe(0);
    expect(withoutTs(session)[1]).toStrictEqual({
      role: "user",
      content: "[blocked by no-fraud]",
      guardrail: { name: "no-fraud", action: "block", message: "refund fraud pattern" },
    });
    expectEveryCallAnsweredOnce(session);
    expect(events.filter((event) => event.type === "run-end")).toMatchObject([{ outcome: "blocked" }]);
  });

  it("an agent's output guardrails check its own answers only; a new user message is checked on the next run", async () => {
    const billing = defineAgent({
      name: "billing",
      systemPrompt: "Billing.",
      invokeModel: scriptedModel([answer("invoice 7 is paid"), answer("invoice 8 is open")]),
      guardrails: {
        output: [
          {
            name: "no-invoice-8",
            check: ({ text }) =>
              text?.includes("8") === true ? { action: "block", message: "not yours" } : { action: "allow" },
          },
        ],
      },
    });
    const session = await runAgent(billing, initSession("s", "invoice 7?"));
    expect(session.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: "invoice 7 is paid",
      agent: "billing",
    });
    extendSession(session, { role: "user", content: "and invoice 8?" });
    await runAgent(billing, session);
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "[blocked by no-invoice-8]" });
  });

  it("a verbatim answer (subagentTool) is checked by the caller's output guardrails like any answer", async () => {
    const researcher = defineAgent({
      name: "researcher",
      systemPrompt: "You research.",
      invokeModel: scriptedModel([answer("The secret formula is X.")]),
    });
    const parent = scriptedModel([
      [{ type: "tool_call", id: "c1", name: "researcher", input: { prompt: "formula?" } }],
    ]);
    const asked: GuardrailInput[] = [];
    const session = await agentLoop(
      parent,
      [subagentTool(researcher, { answer: "verbatim" })],
      initSession("s", "hi"),
      {
        guardrails: {
          output: [
            {
              name: "leaks",
              check: (input) => {
                asked.push(input);
                return input.text?.includes("secret") === true
                  ? { action: "block", message: "a secret" }
                  : { action: "allow" };
              },
            },
          ],
        },
      },
    );
    expect(asked.map((input) => [input.kind, input.text])).toStrictEqual([["output", "The secret formula is X."]]);
    expectEveryCallAnsweredOnce(session);
    expect(withoutTs(session).at(-1)).toStrictEqual({
      role: "assistant",
      content: "[blocked by leaks]",
      guardrail: { name: "leaks", action: "block", message: "a secret" },
      stopReason: "end_turn",
    });
  });

  it("defineAgent and the loop refuse malformed guardrails", async () => {
    expect(() =>
      defineAgent({
        name: "x",
        systemPrompt: "x",
        invokeModel: scriptedModel([]),
        guardrails: { input: [{ name: "", check: () => ({ action: "allow" }) }] },
      }),
    ).toThrow(/guardrails.input\[0\].name/);
    await expect(
      agentLoop(scriptedModel([]), [], initSession("s", "u"), {
        guardrails: { output: [{ name: "x", holdBack: "word" as "answer", check: () => ({ action: "allow" }) }] },
      }),
    ).rejects.toThrow(/holdBack/);
  });
});
