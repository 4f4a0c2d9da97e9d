import { describe, expect, it } from "vitest";
import {
  agentLoop,
  initSession,
  isMaxIterationsError,
  type AgentEvent,
  type InvokeModel,
  type Message,
  type Session,
} from "simple-agent-loop";
import { anthropic } from "simple-agent-loop/anthropic";
import { bedrock } from "simple-agent-loop/bedrock";
import { gemini } from "simple-agent-loop/google";
import {
  fromOpenAIResponsesResponse,
  openaiChat,
  openaiResponses,
  type OpenAIResponsesResponse,
} from "simple-agent-loop/openai";
import type { FixtureFolder } from "./fixtures.ts";
import { withoutAnswerer } from "../helpers.ts";
import { fixtureFolders, recordedAnswers, type RecordedAnswer } from "./recordings.ts";

/** The adapter that reads a folder's recordings, answering every request with `body`. */
function adapterFor(folder: FixtureFolder, answer: RecordedAnswer): InvokeModel {
  const contentType =
    answer.folder === "bedrock" && answer.streamed
      ? "application/vnd.amazon.eventstream"
      : answer.streamed
        ? "text/event-stream"
        : "application/json";
  const fetch = (): Promise<Response> =>
    Promise.resolve(new Response(new Blob([answer.body]), { status: 200, headers: { "content-type": contentType } }));
  const common = { baseURL: "http://127.0.0.1:9", apiKey: "recorded-test-key-123456", fetch, stream: answer.streamed };
  switch (folder) {
    case "anthropic":
      return anthropic({ model: "claude-test", maxTokens: 1000, ...common });
    case "bedrock":
      return bedrock({ model: "amazon.nova-micro-v1:0", region: "us-east-1", ...common });
    case "google":
      return gemini({ model: "gemini-test", ...common });
    case "openai-chat":
      return openaiChat({ model: "gpt-test", ...common });
    case "openai-responses":
      return openaiResponses({ model: "gpt-test", ...common });
  }
}

/** What a listener was shown of one model turn, and what the session stored of it. */
export type ReadTurn = { shownText: string; shownThinking: string; stored: Message[]; error?: unknown };

/** Runs one model turn of `invokeModel` through the loop, listening as a user would. */
export async function readTurn(invokeModel: InvokeModel): Promise<ReadTurn> {
  let shownText = "";
  let shownThinking = "";
  const onEvent = (event: AgentEvent): void => {
    if (event.type === "text-delta") shownText += event.delta;
    else if (event.type === "thinking-delta") shownThinking += event.delta;
  };
  let error: unknown;
  const session: Session = await agentLoop(invokeModel, [], initSession("s", "u"), {
    maxIterations: 1,
    retry: false,
    onEvent,
  }).catch((failure: { session?: Session }) => ((error = failure), failure.session ?? initSession("s", "u")));
  const turn = session.messages.slice(2);
  const results = turn.findIndex((message) => "type" in message && message.type === "tool_result");
  const stored = (results === -1 ? turn : turn.slice(0, results)).map((message) => {
    const { ts: _ts, ...rest } = message;
    return rest;
  });
  return { shownText, shownThinking, stored, ...(error === undefined ? {} : { error }) };
}

const storedText = (messages: readonly Message[]): string[] =>
  messages.flatMap((message) => ("role" in message && message.role === "assistant" ? [message.content] : []));
const storedThinking = (messages: readonly Message[]): string[] =>
  messages.flatMap((message) => ("type" in message && message.type === "thinking" ? [message.content] : []));

/** The property every adapter keeps on every answer: what a listener is shown adds up to what is stored, once. */
export function expectShownEqualsStored(turn: ReadTurn, streamed = true): void {
  // One iteration: a turn with tool calls ends the run there (its calls answered), not in a failure of the turn.
  if (!isMaxIterationsError(turn.error)) expect(turn.error).toBeUndefined();
  expect(turn.stored.length).toBeGreaterThan(0);
  if (streamed) {
    expect(turn.shownText).toBe(storedText(turn.stored).join(""));
    expect(turn.shownThinking).toBe(storedThinking(turn.stored).join(""));
  }
  for (const texts of [storedText(turn.stored), storedThinking(turn.stored)]) {
    const nonEmpty = texts.filter((text) => text !== "");
    expect(new Set(nonEmpty).size, `a block stored twice: ${JSON.stringify(nonEmpty)}`).toBe(nonEmpty.length);
  }
}

describe("every recorded answer through its adapter: what a listener sees adds up to what is stored", () => {
  for (const folder of fixtureFolders) {
    const answers = recordedAnswers(folder);
    it(`${folder} has recorded answers to replay`, () => {
      expect(answers.length).toBeGreaterThan(0);
    });
    for (const answer of answers) {
      it(`${folder}: ${answer.name} (${answer.streamed ? "streamed" : "whole"})`, async () => {
        const turn = await readTurn(adapterFor(folder, answer));
        expectShownEqualsStored(turn, answer.streamed);
        if (answer.streamed && folder === "openai-responses") {
          // The stream's final response holds the whole answer: the non-streamed form of the same turn.
          const final = finalResponse(answer.body as string);
          if (final?.output !== undefined && final.output.length > 0)
            expect(turn.stored.map(opaqueSignature)).toStrictEqual(
              fromOpenAIResponsesResponse(final).map(opaqueSignature),
            );
        }
      });
    }
  }
});

// The server encrypts reasoning again for the final response: the signature is there on both, its bytes differ.
function opaqueSignature(message: Message): Message {
  return "signature" in message && typeof message.signature === "string" ? { ...message, signature: "…" } : message;
}

function finalResponse(body: string): OpenAIResponsesResponse | undefined {
  for (const line of body.split("\n").reverse()) {
    if (!line.startsWith("data: ")) continue;
    const event = JSON.parse(line.slice(6)) as { type?: string; response?: OpenAIResponsesResponse };
    if (event.type === "response.completed" || event.type === "response.incomplete") return event.response;
  }
  return undefined;
}

// Streams the recordings above do not hold, built from the providers' documented event shapes
// (the OpenAI Responses streaming reference; OpenRouter's Responses API, which shows raw reasoning
// as reasoning_text and sends the reasoning's summary events again after the answer).
function responsesAnswer(events: readonly Record<string, unknown>[]): InvokeModel {
  const body = events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join("");
  return adapterFor("openai-responses", { name: "built", folder: "openai-responses", streamed: true, body });
}
const created = { type: "response.created", response: { id: "resp_1", status: "in_progress", output: [] } };
const completed = (output: unknown[]) => ({
  type: "response.completed",
  response: { id: "resp_1", status: "completed", output, usage: { input_tokens: 5, output_tokens: 7 } },
});
const reasoningText = ["First, ", "add ", "the numbers."];
const thought = reasoningText.join("");
const answerText = "It is 19.";
const messageItem = {
  id: "msg_1",
  type: "message",
  role: "assistant",
  content: [{ type: "output_text", text: answerText }],
};

describe("streams built from documented shapes: shown equals stored", () => {
  it("openai-responses through OpenRouter: raw reasoning deltas, then the same text again as a summary at the end", async () => {
    const reasoningItem = {
      id: "rs_1",
      type: "reasoning",
      summary: [{ type: "summary_text", text: thought }],
      content: [{ type: "reasoning_text", text: thought }],
    };
    const turn = await readTurn(
      responsesAnswer([
        created,
        { type: "response.output_item.added", output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [] } },
        ...reasoningText.map((delta) => ({
          type: "response.reasoning_text.delta",
          item_id: "rs_1",
          output_index: 0,
          content_index: 0,
          delta,
        })),
        { type: "response.reasoning_text.done", item_id: "rs_1", output_index: 0, content_index: 0, text: thought },
        { type: "response.output_item.added", output_index: 1, item: { ...messageItem, content: [] } },
        { type: "response.output_text.delta", item_id: "msg_1", output_index: 1, content_index: 0, delta: answerText },
        { type: "response.output_item.done", output_index: 1, item: messageItem },
        { type: "response.reasoning_summary_part.added", item_id: "rs_1", output_index: 0, summary_index: 0 },
        {
          type: "response.reasoning_summary_text.delta",
          item_id: "rs_1",
          output_index: 0,
          summary_index: 0,
          delta: thought,
        },
        {
          type: "response.reasoning_summary_text.done",
          item_id: "rs_1",
          output_index: 0,
          summary_index: 0,
          text: thought,
        },
        { type: "response.output_item.done", output_index: 0, item: reasoningItem },
        completed([reasoningItem, messageItem]),
      ]),
    );
    expectShownEqualsStored(turn);
    expect(turn.shownThinking).toBe(thought);
    expect(turn.stored.filter((message) => "type" in message && message.type === "thinking")).toHaveLength(1);
  });

  it("openai-responses: reasoning streamed as raw text whose done item also has a different summary stores what was shown", async () => {
    const reasoningItem = {
      id: "rs_1",
      type: "reasoning",
      summary: [{ type: "summary_text", text: "Checked the sum." }],
      content: [{ type: "reasoning_text", text: thought }],
    };
    const turn = await readTurn(
      responsesAnswer([
        created,
        { type: "response.output_item.added", output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [] } },
        ...reasoningText.map((delta) => ({
          type: "response.reasoning_text.delta",
          item_id: "rs_1",
          output_index: 0,
          delta,
        })),
        { type: "response.output_item.done", output_index: 0, item: reasoningItem },
        { type: "response.output_item.added", output_index: 1, item: { ...messageItem, content: [] } },
        { type: "response.output_text.delta", item_id: "msg_1", output_index: 1, delta: answerText },
        { type: "response.output_item.done", output_index: 1, item: messageItem },
        completed([reasoningItem, messageItem]),
      ]),
    );
    expectShownEqualsStored(turn);
    expect(turn.shownThinking).toBe(thought);
  });

  it("openai-responses: items that arrive whole (no deltas), or with deltas that stop short, are shown whole", async () => {
    const turn = await readTurn(
      responsesAnswer([
        created,
        { type: "response.output_item.added", output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [] } },
        {
          type: "response.output_item.done",
          output_index: 0,
          item: { id: "rs_1", type: "reasoning", summary: [{ type: "summary_text", text: thought }] },
        },
        { type: "response.output_item.added", output_index: 1, item: { ...messageItem, content: [] } },
        { type: "response.output_text.delta", item_id: "msg_1", output_index: 1, delta: "It is" },
        { type: "response.output_item.done", output_index: 1, item: messageItem },
        completed([]),
      ]),
    );
    expectShownEqualsStored(turn);
    expect(turn.shownText).toBe(answerText);
  });

  it("openai-responses: rotating ids with the done item's text differing from nothing streamed are stored once", async () => {
    const turn = await readTurn(
      responsesAnswer([
        created,
        { type: "response.output_item.added", output_index: 0, item: { id: "a1", type: "message", content: [] } },
        { type: "response.output_text.delta", item_id: "a2", output_index: 0, delta: "It is " },
        { type: "response.output_text.delta", item_id: "a3", output_index: 0, delta: "19." },
        { type: "response.output_text.done", item_id: "a4", output_index: 0, text: answerText },
        { type: "response.output_item.done", output_index: 0, item: { ...messageItem, id: "a5" } },
        completed([{ ...messageItem, id: "a6" }]),
      ]),
    );
    expectShownEqualsStored(turn);
    expect(withoutAnswerer(turn.stored)).toStrictEqual([
      { role: "assistant", content: answerText, stopReason: "end_turn", usage: { inputTokens: 5, outputTokens: 7 } },
    ]);
  });
});

describe("anthropic: a repeated message_start", () => {
  const start = (id: string) => ({
    type: "message_start",
    message: { id, type: "message", role: "assistant", content: [], usage: { input_tokens: 17, output_tokens: 1 } },
  });
  const text = (index: number, delta: string) => [
    { type: "content_block_start", index, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index, delta: { type: "text_delta", text: delta } },
    { type: "content_block_stop", index },
  ];
  const end = [
    { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 5 } },
    { type: "message_stop" },
  ];
  const answer = (events: readonly unknown[]): InvokeModel =>
    adapterFor("anthropic", {
      name: "built",
      folder: "anthropic",
      streamed: true,
      body: events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join(""),
    });

  it("the same start twice before any content is one message", async () => {
    const turn = await readTurn(answer([start("msg_1"), start("msg_1"), ...text(0, "Hello"), ...end]));
    expectShownEqualsStored(turn);
    expect(turn.stored).toMatchObject([{ role: "assistant", content: "Hello" }]);
  });

  for (const [name, events] of [
    ["another id", [start("msg_1"), start("msg_2"), ...text(0, "Hello"), ...end]],
    [
      "the same id after content began",
      [start("msg_1"), ...text(0, "Hel"), start("msg_1"), ...text(0, "Hello"), ...end],
    ],
  ] as const) {
    it(`a second start with ${name} is a broken stream, never a turn`, async () => {
      const turn = await readTurn(answer(events));
      expect(turn.error).toMatchObject({ name: "ProviderError", retryable: true });
      expect(turn.stored).toStrictEqual([]);
    });
  }
});
