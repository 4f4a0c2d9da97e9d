import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentLoop, initSession, type AgentEvent, type Session } from "simple-agent-loop";
import { fromOpenAIResponsesResponse, openaiResponses } from "simple-agent-loop/openai";
import { withoutTs } from "../helpers.ts";
import { sse, sseHeaders, startReplayServer, type ReplayServer } from "./replay-server.ts";
import { recordedFixtures } from "./fixtures.ts";

type Event = Record<string, unknown> & { type: string };
const recorded = (): Event[] =>
  recordedFixtures("openai-responses").chunks("vercel-ai__openai-reasoning-encrypted-content.1.chunks.txt") as Event[];

// The first recorded response (reasoning with summary deltas, then a calculator call).
function firstResponse(): Event[] {
  const events = recorded();
  const second = events.findIndex((event, index) => index > 0 && event.type === "response.created");
  return events.slice(0, second);
}
const summaryText = (events: readonly Event[]): string =>
  events
    .filter((event) => event.type === "response.reasoning_summary_text.delta")
    .map((event) => event.delta as string)
    .join("");

const calculator = { name: "calculator", description: "Arithmetic.", input_schema: { type: "object" } };

describe("openai-responses: what compatible servers send", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });
  const run = async (events: readonly Event[]): Promise<{ session: Session; thinking: string }> => {
    server.enqueue({ headers: sseHeaders, chunks: sse(events, { withEventNames: true }) });
    const deltas: string[] = [];
    const session = await agentLoop(
      openaiResponses({ model: "gpt-oss-120b", baseURL: server.origin, apiKey: "sk-test-key-123456" }),
      [calculator],
      initSession("s", "12+7?"),
      {
        maxIterations: 1,
        toolHandlers: { calculator: () => "19" },
        onEvent: (event: AgentEvent) => void (event.type === "thinking-delta" && deltas.push(event.delta)),
      },
    ).catch((error: { session: Session }) => error.session);
    return { session, thinking: deltas.join("") };
  };

  it("keeps reasoning sent as reasoning_text (gpt-oss on vLLM or Ollama), streamed and in the done item", async () => {
    // The recorded stream with its summary deltas sent as reasoning_text deltas, and the done
    // reasoning item as such servers send it: the text in `content`, no summary, no encrypted content.
    const events = firstResponse();
    const text = summaryText(events);
    const reshaped = events
      .filter(
        (event) =>
          !event.type.startsWith("response.reasoning_summary_part") &&
          event.type !== "response.reasoning_summary_text.done",
      )
      .map((event): Event => {
        if (event.type === "response.reasoning_summary_text.delta")
          return {
            type: "response.reasoning_text.delta",
            item_id: event.item_id,
            output_index: event.output_index,
            content_index: 0,
            delta: event.delta,
          };
        const item = event.item as { type?: string; id?: string } | undefined;
        if (event.type === "response.output_item.added" && item?.type === "reasoning")
          return { ...event, item: { id: item.id, type: "reasoning", summary: [], content: [] } };
        if (event.type === "response.output_item.done" && item?.type === "reasoning")
          return {
            ...event,
            item: { id: item.id, type: "reasoning", summary: [], content: [{ type: "reasoning_text", text }] },
          };
        return event;
      });
    const { session, thinking } = await run(reshaped);
    expect(thinking).toBe(text);
    expect(withoutTs(session)[2]).toStrictEqual({ type: "thinking", content: text, provider: "openai-responses" });
  });

  it("a done item without its summary keeps the streamed summary", async () => {
    const events = firstResponse();
    const withoutSummary = events.map((event): Event => {
      const item = event.item as { type?: string } | undefined;
      return event.type === "response.output_item.done" && item?.type === "reasoning"
        ? { ...event, item: { ...item, summary: [] } }
        : event;
    });
    const { session } = await run(withoutSummary);
    expect(withoutTs(session)[2]).toMatchObject({
      type: "thinking",
      content: summaryText(events),
      provider: "openai-responses",
    });
  });

  it("takes the items of the final response that no output_item.done carried", async () => {
    const events = firstResponse().filter((event) => event.type !== "response.output_item.done");
    const completed = events.at(-1)!.response as { output: unknown[] };
    expect(completed.output.length).toBeGreaterThan(1);
    const { session } = await run(events);
    const kinds = withoutTs(session)
      .slice(2)
      .map((message) => ("type" in message ? message.type : message.role));
    expect(kinds).toStrictEqual(["thinking", "tool_call", "tool_result"]);
    expect(withoutTs(session)[3]).toMatchObject({
      name: "calculator",
      input: { a: 12, b: 7, op: "add" },
      stopReason: "tool_use",
    });
  });

  it("counts reasoning in outputTokens when the server's total leaves it out of output_tokens", () => {
    const text = { type: "message", content: [{ type: "output_text", text: "19" }] };
    const apart = {
      input_tokens: 291,
      output_tokens: 26,
      total_tokens: 506,
      output_tokens_details: { reasoning_tokens: 189 },
    };
    expect(fromOpenAIResponsesResponse({ status: "completed", output: [text], usage: apart }).at(-1)).toMatchObject({
      usage: { inputTokens: 291, outputTokens: 215, reasoningTokens: 189 },
    });
    const included = {
      input_tokens: 291,
      output_tokens: 215,
      total_tokens: 506,
      output_tokens_details: { reasoning_tokens: 189 },
    };
    expect(fromOpenAIResponsesResponse({ status: "completed", output: [text], usage: included }).at(-1)).toMatchObject({
      usage: { inputTokens: 291, outputTokens: 215, reasoningTokens: 189 },
    });
  });
});
