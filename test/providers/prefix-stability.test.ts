import { describe, expect, it } from "vitest";
import {
  agentLoop,
  initSession,
  send,
  tool,
  type AgentEvent,
  type AgentLoopOptions,
  type InvokeModel,
  type ModelMessage,
  type Session,
} from "simple-agent-loop";
import { anthropic } from "simple-agent-loop/anthropic";
import { bedrock } from "simple-agent-loop/bedrock";
import { gemini } from "simple-agent-loop/google";
import { openaiChat, openaiResponses, reasoningSignature } from "simple-agent-loop/openai";

// Prompt caching pays only while each request begins with the bytes of the one before it. A long
// scripted run (thinking with signatures, parallel calls, tool results of varied sizes, two runs
// on one session) goes through each adapter's real request building; every request body is
// captured at the transport, and request N+1 must repeat request N's messages unchanged in the
// provider's own form. Cache breakpoints move as the run goes (that is how a prefix advances), so
// they are compared apart: the message that ended request N carries one in request N+1.

type Adapter = {
  name: string;
  /** The provider id thinking and signed calls are tagged with (only a provider's own go back). */
  provider: string;
  create: (fetch: typeof globalThis.fetch) => InvokeModel;
  /** The body's messages, its other parts that must never change, and a message's cache marks. */
  messagesOf: (body: Body) => unknown[];
  fixedParts: (body: Body) => unknown;
  /** A message without its cache marks, and whether it had any (undefined: the adapter sets none). */
  unmarked?: (message: unknown) => { message: unknown; marked: boolean };
};

type Body = Record<string, unknown>;

const apiKey = "sk-test-prefix-0123456789";
const fixedParts =
  (...keys: string[]) =>
  (body: Body): unknown =>
    Object.fromEntries(keys.map((key) => [key, body[key]]));

const adapters: Adapter[] = [
  {
    name: "anthropic",
    provider: "anthropic",
    create: (fetch) => anthropic({ model: "claude-sonnet-4-5", apiKey, fetch, stream: false }),
    messagesOf: (body) => body.messages as unknown[],
    fixedParts: fixedParts("system", "tools", "model", "max_tokens", "tool_choice", "thinking"),
    unmarked: (message) => {
      const { content, ...rest } = message as { content: Record<string, unknown>[] };
      let marked = false;
      const blocks = content.map(({ cache_control, ...block }) => {
        if (cache_control !== undefined) marked = true;
        return block;
      });
      return { message: { ...rest, content: blocks }, marked };
    },
  },
  {
    name: "bedrock (Claude)",
    provider: "bedrock",
    create: (fetch) =>
      bedrock({ model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", region: "us-east-1", apiKey, fetch }),
    messagesOf: (body) => body.messages as unknown[],
    fixedParts: fixedParts("system", "toolConfig", "inferenceConfig", "additionalModelRequestFields"),
    unmarked: (message) => {
      const { content, ...rest } = message as { content: Record<string, unknown>[] };
      const blocks = content.filter((block) => !("cachePoint" in block));
      return { message: { ...rest, content: blocks }, marked: blocks.length < content.length };
    },
  },
  {
    name: "openai chat",
    provider: "openai-chat",
    create: (fetch) => openaiChat({ model: "gpt-5", apiKey, fetch, stream: false }),
    messagesOf: (body) => body.messages as unknown[],
    fixedParts: fixedParts("tools", "model", "prompt_cache_key", "tool_choice"),
  },
  {
    name: "openai responses",
    provider: "openai-responses",
    create: (fetch) => openaiResponses({ model: "gpt-5", apiKey, fetch, stream: false }),
    messagesOf: (body) => body.input as unknown[],
    fixedParts: fixedParts("instructions", "tools", "model", "prompt_cache_key", "reasoning", "include"),
  },
  {
    name: "google",
    provider: "google",
    create: (fetch) => gemini({ model: "gemini-2.5-pro", apiKey, fetch, stream: false }),
    messagesOf: (body) => body.contents as unknown[],
    fixedParts: fixedParts("systemInstruction", "tools", "toolConfig"),
  },
];

// Outputs of realistic, varied sizes: a short status, a file, a long log.
const outputs = ["ok", "x".repeat(3_000), "line of a log\n".repeat(2_000), '{"matches":3}'];
const readTool = tool({
  name: "read",
  description: "Read a file.",
  inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  handler: (input) => outputs[String(input.path).length % outputs.length]!,
});
const grepTool = tool({
  name: "grep",
  description: "Search files.",
  inputSchema: { type: "object", properties: { pattern: { type: "string" } }, required: ["pattern"] },
  handler: (input) => `${String(input.pattern)}: 3 matches`,
});

// A model turn of the script: thinking (signed in the provider's own form), text, and calls.
function turn(
  provider: string,
  step: number,
  calls: { name: string; input: Record<string, string> }[],
): ModelMessage[] {
  const signature =
    provider === "openai-responses" ? reasoningSignature(`rs_${step}`, `encrypted-${step}`) : `signature-${step}`;
  const thinking: ModelMessage = { type: "thinking", content: `thinking about step ${step}`, signature, provider };
  const text: ModelMessage[] = step % 2 === 0 ? [{ role: "assistant", content: `Step ${step}.` }] : [];
  const toolCalls: ModelMessage[] = calls.map((call, index) => ({
    type: "tool_call",
    id: `call_${step}_${index}`,
    name: call.name,
    input: call.input,
    // Gemini signs its calls; the others ignore a signature of another provider.
    ...(provider === "google" && index === 0 ? { signature: `call-signature-${step}`, provider } : {}),
  }));
  const usage = { usage: { inputTokens: 1000 * step, outputTokens: 50 } };
  const answer = [thinking, ...text, ...toolCalls];
  return answer.map((message, index) => (index === answer.length - 1 ? { ...message, ...usage } : message));
}

function script(provider: string): ModelMessage[][] {
  const read = (path: string) => ({ name: "read", input: { path } });
  const grep = (pattern: string) => ({ name: "grep", input: { pattern } });
  return [
    turn(provider, 1, [read("a"), read("bb")]),
    turn(provider, 2, [grep("TODO")]),
    turn(provider, 3, [read("ccc"), grep("fixme"), read("dddd")]),
    turn(provider, 4, [read("eeeee")]),
    turn(provider, 5, []),
    // A second run on the same session (the next task of a chat).
    turn(provider, 6, [grep("export")]),
    turn(provider, 7, [read("ff"), read("g")]),
    turn(provider, 8, []),
  ];
}

/**
 * Runs the script through `adapter`: each call builds and sends the adapter's real request (the
 * body is captured; the transport then fails) and answers with the script's next turn.
 */
async function capturedRequests(
  adapter: Adapter,
  options: AgentLoopOptions = {},
  answers: ModelMessage[][] = script(adapter.provider),
): Promise<Body[]> {
  const bodies: Body[] = [];
  const fetch: typeof globalThis.fetch = async (_url, init) => {
    const body = init?.body;
    bodies.push(JSON.parse(typeof body === "string" ? body : new TextDecoder().decode(body as Uint8Array)) as Body);
    return new Response(JSON.stringify({ error: { message: "captured" } }), { status: 400 });
  };
  const provider = adapter.create(fetch);
  let next = 0;
  const invoke: InvokeModel = async (tools, session, context) => {
    try {
      const answer = provider(tools, session, context);
      if (Symbol.asyncIterator in answer) for await (const _event of answer);
      else await answer;
    } catch {
      // The request was captured; the script answers.
    }
    return answers[next++]!;
  };
  const session: Session = initSession("You are a careful coding agent.", "Fix the failing test.");
  const onEvent = options.onEvent;
  // Compactions are told by the number of requests sent before them.
  const run = {
    ...options,
    onEvent: (event: AgentEvent) => onEvent?.({ ...event, iteration: bodies.length } as AgentEvent),
    loopGuard: false as const,
  };
  await agentLoop(invoke, [readTool, grepTool], session, run);
  send(session, "Now add a test for it.");
  await agentLoop(invoke, [readTool, grepTool], session, run);
  expect(next).toBe(answers.length);
  return bodies;
}

describe("every adapter keeps the prompt prefix: request N+1 begins with request N's messages, byte for byte", () => {
  for (const adapter of adapters) {
    it(`${adapter.name}`, async () => {
      const bodies = await capturedRequests(adapter, { compaction: false });
      expect(bodies).toHaveLength(script(adapter.provider).length);
      const unmarked = (message: unknown) => adapter.unmarked?.(message) ?? { message, marked: false };
      for (let index = 1; index < bodies.length; index++) {
        const before = adapter.messagesOf(bodies[index - 1]!);
        const after = adapter.messagesOf(bodies[index]!);
        const where = `${adapter.name}: request ${index + 1} against request ${index}`;
        expect(after.length, where).toBeGreaterThan(before.length);
        for (let position = 0; position < before.length; position++)
          expect(JSON.stringify(unmarked(after[position]).message), `${where}, message ${position}`).toBe(
            JSON.stringify(unmarked(before[position]).message),
          );
        expect(JSON.stringify(adapter.fixedParts(bodies[index]!)), where).toBe(
          JSON.stringify(adapter.fixedParts(bodies[index - 1]!)),
        );
        if (adapter.unmarked === undefined) continue;
        // The prefix request N wrote is read back: a breakpoint on the message that ended it, and one on the new end.
        expect(unmarked(after[before.length - 1]).marked, `${where}: the previous end keeps a breakpoint`).toBe(true);
        expect(unmarked(after[after.length - 1]).marked, `${where}: the new end has one`).toBe(true);
      }
      // Signed thinking of the provider's own goes back (and so is part of the prefix compared).
      const signed = adapter.provider === "openai-responses" ? "encrypted-1" : "signature-1";
      if (adapter.provider !== "openai-chat") expect(JSON.stringify(bodies.at(-1)).includes(signed)).toBe(true);
    });
  }
});

describe("with the default compaction, request N+1 changes request N's messages only where a compaction was announced", () => {
  // Long thinking (truncation cuts it) and long outputs (clearing replaces them), 24 calls.
  const longScript = (provider: string): ModelMessage[][] =>
    Array.from({ length: 24 }, (_, step) =>
      step === 11 || step === 23
        ? [{ role: "assistant", content: `Done with part ${step}.` }]
        : turn(provider, step + 1, [{ name: "read", input: { path: "x".repeat(1 + (step % 3)) } }]).map((message) =>
            "type" in message && message.type === "thinking"
              ? { ...message, content: `${message.content} `.repeat(20) }
              : message,
          ),
    );

  for (const adapter of adapters) {
    it(`${adapter.name}`, async () => {
      const compactedBefore = new Set<number>();
      const bodies = await capturedRequests(
        adapter,
        {
          onEvent: (event) => {
            if (event.type === "compaction")
              compactedBefore.add((event as unknown as { iteration: number }).iteration + 1);
          },
        },
        longScript(adapter.provider),
      );
      expect(compactedBefore.size, "the script makes the default compaction cut something").toBeGreaterThan(0);
      const unmarked = (message: unknown) => JSON.stringify(adapter.unmarked?.(message).message ?? message);
      let held = 0;
      for (let index = 1; index < bodies.length; index++) {
        const before = adapter.messagesOf(bodies[index - 1]!);
        const after = adapter.messagesOf(bodies[index]!);
        const same = before.every((message, position) => unmarked(message) === unmarked(after[position]));
        if (same) held++;
        else
          expect(
            compactedBefore.has(index + 1),
            `${adapter.name}: request ${index + 1} changed without a compaction`,
          ).toBe(true);
      }
      // Cuts come in batches: most requests keep the prefix.
      expect(held).toBeGreaterThanOrEqual(bodies.length - 1 - compactedBefore.size);
    });
  }
});
