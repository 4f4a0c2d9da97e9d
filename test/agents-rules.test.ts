import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  defineAgent,
  handoff,
  HandoffLimitError,
  initSession,
  runAgent,
  send,
  tool,
  type InvokeModel,
  type ModelMessage,
} from "simple-agent-loop";
import { anthropic } from "simple-agent-loop/anthropic";
import { openaiChat } from "simple-agent-loop/openai";
import { scriptedModel } from "simple-agent-loop/testing";
import { closeSession, loadSession, openSession } from "simple-agent-loop/store";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";
import { answer, call } from "./scripted-turns.ts";

const directories: string[] = [];
afterEach(async () => {
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

const lookup = tool({
  name: "lookup",
  description: "Look up the account.",
  inputSchema: { type: "object", properties: {} },
  handler: () => "account 42",
});

describe("agents and handoffs: each rule", () => {
  it("resumes a session saved in the file store with the agent that was active", async () => {
    const directory = await mkdtemp(join(tmpdir(), "agents-store-"));
    directories.push(directory);
    const path = join(directory, "support.jsonl");
    const billing = defineAgent({
      name: "billing",
      systemPrompt: "b",
      invokeModel: scriptedModel([answer("which invoice?"), answer("INV-7 is paid.")]),
    });
    const triage = defineAgent({
      name: "triage",
      systemPrompt: "t",
      invokeModel: scriptedModel([[call("h1", "transfer_to_billing")]]),
      handoffs: [billing],
    });
    const session = await openSession(path);
    send(session, "invoice question");
    await runAgent(triage, session);
    await closeSession(session);
    // As a new process would: only the file and the root agent.
    const loaded = await openSession(path);
    expect(loaded.messages.at(-1)).toMatchObject({ content: "which invoice?", agent: "billing" });
    send(loaded, "INV-7");
    await runAgent(triage, loaded);
    await closeSession(loaded);
    const final = await loadSession(path);
    expectEveryCallAnsweredOnce(final);
    expect(final.messages.at(-1)).toMatchObject({ content: "INV-7 is paid.", agent: "billing" });
  });

  it("onHandoff runs before the target's first model call; returnTo gives the target transfer_back_to_<caller>", async () => {
    const order: string[] = [];
    const billingTools: string[][] = [];
    const billing = defineAgent({
      name: "billing",
      systemPrompt: "b",
      invokeModel: (tools) => {
        order.push("billing model call");
        billingTools.push(tools.map((schema) => schema.name));
        return [answer("billing here")];
      },
    });
    const triage = defineAgent({
      name: "triage",
      systemPrompt: "t",
      invokeModel: scriptedModel([[call("h1", "transfer_to_billing")]]),
      handoffs: [
        handoff(billing, {
          returnTo: true,
          onHandoff: async ({ from, to, session }) => {
            await Promise.resolve();
            order.push(`onHandoff ${from}->${to} after ${session.messages.length} messages`);
          },
        }),
      ],
    });
    await runAgent(triage, initSession("s", "hi"));
    expect(order).toStrictEqual(["onHandoff triage->billing after 4 messages", "billing model call"]);
    expect(billingTools).toStrictEqual([["transfer_back_to_triage"]]);
  });
});

describe("maxHandoffs", () => {
  it("defaults to 10: the 11th handoff of one call throws HandoffLimitError with a valid session", async () => {
    const back = Array.from({ length: 8 }, (_, index) => [call(`b${String(index)}`, "transfer_back_to_triage")]);
    const forth = Array.from({ length: 8 }, (_, index) => [call(`t${String(index)}`, "transfer_to_billing")]);
    const billing = defineAgent({ name: "billing", systemPrompt: "b", invokeModel: scriptedModel(back) });
    const triage = defineAgent({
      name: "triage",
      systemPrompt: "t",
      invokeModel: scriptedModel(forth),
      handoffs: [handoff(billing, { returnTo: true })],
    });
    let handoffs = 0;
    const error = await runAgent(triage, initSession("s", "loop"), {
      onEvent: (event) => {
        if (event.type === "handoff") handoffs++;
      },
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HandoffLimitError);
    expect((error as HandoffLimitError).message).toContain("10");
    expect(handoffs).toBe(10);
    expectEveryCallAnsweredOnce((error as HandoffLimitError).session);
  });
});

// The target's adapter builds its real request (captured at the transport, which then fails) and
// the test answers for it: what another provider is sent of a conversation that came from Claude.
function capturing(create: (fetch: typeof globalThis.fetch) => InvokeModel, answers: ModelMessage[][]) {
  const bodies: string[] = [];
  const fetch: typeof globalThis.fetch = async (_url, init) => {
    const body = init?.body;
    bodies.push(typeof body === "string" ? body : new TextDecoder().decode(body as Uint8Array));
    return new Response(JSON.stringify({ error: { message: "captured" } }), { status: 400 });
  };
  const provider = create(fetch);
  let next = 0;
  const invokeModel: InvokeModel = async (tools, session, context) => {
    try {
      const reply = provider(tools, session, context);
      if (Symbol.asyncIterator in reply) for await (const _event of reply);
      else await reply;
    } catch {
      // Captured; the script answers.
    }
    return answers[next++]!;
  };
  return { bodies, invokeModel };
}

// Triage on Claude: signed thinking, a lookup beside the handoff.
function claudeTriage(target: ReturnType<typeof defineAgent>, history: "full" | "no-tools") {
  return defineAgent({
    name: "triage",
    systemPrompt: "You are triage.",
    invokeModel: scriptedModel([
      [
        { type: "thinking", content: "billing question", signature: "claude-signature-abc", provider: "anthropic" },
        call("toolu_1", "lookup"),
        call("toolu_2", "transfer_to_billing"),
      ],
    ]),
    tools: [lookup],
    handoffs: [handoff(target, { history })],
  });
}

describe("cross-provider handoffs: the target's adapter builds its own request", () => {
  const apiKey = "sk-test-cross-provider-0123";
  it('"full" to OpenAI Chat: the calls and results converted, Claude\'s signed thinking not sent', async () => {
    const target = capturing(
      (fetch) => openaiChat({ model: "gpt-5", apiKey, fetch, stream: false }),
      [[answer("Paid.")]],
    );
    const billing = defineAgent({ name: "billing", systemPrompt: "You are billing.", invokeModel: target.invokeModel });
    const session = await runAgent(claudeTriage(billing, "full"), initSession("s", "is INV-7 paid?"));
    expectEveryCallAnsweredOnce(session);
    const body = JSON.parse(target.bodies[0]!) as { messages: Record<string, unknown>[] };
    expect(target.bodies[0]).not.toContain("claude-signature-abc");
    expect(body.messages[0]).toMatchObject({ role: "system", content: "You are billing." });
    expect(body.messages.slice(1).map((message) => message.role)).toStrictEqual(["user", "assistant", "tool", "tool"]);
    expect(body.messages[2]).toMatchObject({
      tool_calls: [
        { id: "toolu_1", function: { name: "lookup" } },
        { id: "toolu_2", function: { name: "transfer_to_billing" } },
      ],
    });
    expect(body.messages[3]).toMatchObject({ role: "tool", tool_call_id: "toolu_1", content: "account 42" });
  });

  it('"no-tools" to OpenAI Chat: text only, no foreign call, result or thinking', async () => {
    const target = capturing(
      (fetch) => openaiChat({ model: "gpt-5", apiKey, fetch, stream: false }),
      [[answer("Paid.")]],
    );
    const billing = defineAgent({ name: "billing", systemPrompt: "You are billing.", invokeModel: target.invokeModel });
    await runAgent(claudeTriage(billing, "no-tools"), initSession("s", "is INV-7 paid?"));
    const body = JSON.parse(target.bodies[0]!) as { messages: Record<string, unknown>[] };
    expect(body.messages).toStrictEqual([
      { role: "system", content: "You are billing." },
      { role: "user", content: "is INV-7 paid?" },
    ]);
  });

  it('"full" from OpenAI to Claude: an OpenAI reasoning item is not sent to Anthropic, the calls are', async () => {
    const target = capturing(
      (fetch) => anthropic({ model: "claude-sonnet-4-5", apiKey, fetch, stream: false }),
      [[answer("Paid.")]],
    );
    const billing = defineAgent({ name: "billing", systemPrompt: "You are billing.", invokeModel: target.invokeModel });
    const triage = defineAgent({
      name: "triage",
      systemPrompt: "t",
      invokeModel: scriptedModel([
        [
          {
            type: "thinking",
            content: "",
            signature: "openai-encrypted-xyz",
            provider: "openai-responses",
            redacted: true,
          },
          call("call_1", "lookup"),
          call("call_2", "transfer_to_billing"),
        ],
      ]),
      tools: [lookup],
      handoffs: [billing],
    });
    await runAgent(triage, initSession("s", "is INV-7 paid?"));
    expect(target.bodies[0]).not.toContain("openai-encrypted-xyz");
    const body = JSON.parse(target.bodies[0]!) as {
      system: unknown;
      messages: { role: string; content: { type: string }[] }[];
    };
    expect(JSON.stringify(body.system)).toContain("You are billing.");
    expect(body.messages.map((message) => message.role)).toStrictEqual(["user", "assistant", "user"]);
    expect(body.messages[1]!.content.map((block) => block.type)).toStrictEqual(["tool_use", "tool_use"]);
    expect(body.messages[2]!.content.map((block) => block.type)).toStrictEqual(["tool_result", "tool_result"]);
  });
});
