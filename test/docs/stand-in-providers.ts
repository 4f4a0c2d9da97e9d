// Loaded with `node --import` before each docs snippet the docs test runs: the providers' APIs
// answered in memory, so a snippet that calls `anthropic()`, `openaiChat()`, `openaiResponses()` or
// `gemini()` (with the environment's test keys, or a base URL of its own such as a local Ollama)
// runs as written, offline. Every answer is one short text that is also valid JSON, so a snippet
// asking for structured output gets what it asks for. Other URLs go to the real fetch.
const answer = JSON.stringify({ score: 1, reason: "the sky is blue" });
const realFetch = globalThis.fetch;

globalThis.fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const url = new URL(input instanceof Request ? input.url : input.toString());
  const stream = streamFor(url.pathname);
  if (stream === undefined) return realFetch(input, init);
  return new Response(stream.map((event) => `${event}\n\n`).join(""), {
    status: 200,
    headers: { "content-type": "text/event-stream" },
  });
};

function streamFor(path: string): string[] | undefined {
  if (path.endsWith("/messages")) return anthropic();
  if (path.endsWith("/chat/completions")) return openaiChat();
  if (path.endsWith("/responses")) return openaiResponses();
  if (/:(stream)?generateContent$/i.test(path)) return gemini();
  return undefined;
}

const data = (payload: unknown, name?: string): string =>
  `${name === undefined ? "" : `event: ${name}\n`}data: ${JSON.stringify(payload)}`;

function anthropic(): string[] {
  return [
    data(
      {
        type: "message_start",
        message: { id: "msg_1", model: "claude-sonnet-4-5", usage: { input_tokens: 10, output_tokens: 1 } },
      },
      "message_start",
    ),
    data({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, "content_block_start"),
    data({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: answer } }, "content_block_delta"),
    data({ type: "content_block_stop", index: 0 }, "content_block_stop"),
    data({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 12 } }, "message_delta"),
    data({ type: "message_stop" }, "message_stop"),
  ];
}

function openaiChat(): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): unknown => ({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    model: "gpt-5",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  return [
    data(chunk({ role: "assistant", content: answer })),
    data(chunk({}, "stop")),
    data({
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      model: "gpt-5",
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: 12, total_tokens: 22 },
    }),
    "data: [DONE]",
  ];
}

function openaiResponses(): string[] {
  const message = {
    type: "message",
    id: "msg_1",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: answer, annotations: [] }],
  };
  return [
    data({ type: "response.output_item.added", output_index: 0, item: { ...message, content: [] } }),
    data({ type: "response.output_text.delta", output_index: 0, content_index: 0, item_id: "msg_1", delta: answer }),
    data({ type: "response.output_item.done", output_index: 0, item: message }),
    data({
      type: "response.completed",
      response: {
        id: "resp_1",
        model: "gpt-5",
        status: "completed",
        output: [message],
        usage: { input_tokens: 10, output_tokens: 12, total_tokens: 22 },
      },
    }),
  ];
}

function gemini(): string[] {
  return [
    data({
      candidates: [{ content: { role: "model", parts: [{ text: answer }] }, finishReason: "STOP" }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 12 },
      modelVersion: "gemini-2.5-flash",
    }),
  ];
}
