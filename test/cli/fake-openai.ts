// A fake OpenAI-compatible Chat Completions server for the CLI's tests, scripted per test: each
// request gets the next scripted turn, streamed as SSE chunks the way OpenAI streams them. Built
// on the providers' replay server (loopback, port 0), which records every request.
import {
  sse,
  sseHeaders,
  startReplayServer,
  type RecordedRequest,
  type ReplayResponse,
} from "../providers/replay-server.ts";

/** One scripted model turn: text and/or tool calls; or a stream that never ends; or an HTTP error. */
export type FakeTurn =
  | {
      text?: string;
      toolCalls?: { name: string; arguments: Record<string, unknown>; id?: string }[];
      usage?: { prompt_tokens: number; completion_tokens: number };
      /** The model the chunks name as the one that answered (none by default, as some local servers). */
      model?: string;
      /** Time between the stream's chunks (a slow model); none by default. */
      chunkDelayMs?: number;
    }
  | { hangAfter: string }
  | { status: number; message: string };

export type ChatRequestBody = {
  model: string;
  messages: { role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }[];
  tools?: unknown[];
};

export type FakeOpenAI = {
  /** The `/v1` root: the value for OPENAI_BASE_URL. */
  baseURL: string;
  requests: RecordedRequest[];
  bodies: () => ChatRequestBody[];
  enqueue: (...turns: FakeTurn[]) => void;
  close: () => Promise<void>;
};

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const server = await startReplayServer();
  let callCount = 0;
  return {
    baseURL: `${server.origin}/v1`,
    requests: server.requests,
    bodies: () => server.requests.map((request) => request.body as ChatRequestBody),
    enqueue: (...turns) => server.enqueue(...turns.map((turn) => respond(turn, ++callCount))),
    close: server.close,
  };
}

function respond(turn: FakeTurn, call: number): ReplayResponse {
  if ("status" in turn) {
    return {
      status: turn.status,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ error: { message: turn.message, type: "invalid_request_error" } }),
    };
  }
  const model = "model" in turn && turn.model !== undefined ? { model: turn.model } : {};
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> => ({
    id: `chatcmpl-${call}`,
    object: "chat.completion.chunk",
    ...model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  if ("hangAfter" in turn)
    return { headers: sseHeaders, chunks: sse([chunk({ role: "assistant", content: turn.hangAfter })]), hang: true };
  const payloads: unknown[] = [chunk({ role: "assistant", content: "" })];
  // Text in a few pieces, as a real stream sends it.
  for (const piece of (turn.text ?? "").match(/.{1,12}/gs) ?? []) payloads.push(chunk({ content: piece }));
  for (const [index, call_] of (turn.toolCalls ?? []).entries()) {
    const id = call_.id ?? `call_${call}_${index}`;
    payloads.push(
      chunk({ tool_calls: [{ index, id, type: "function", function: { name: call_.name, arguments: "" } }] }),
    );
    payloads.push(chunk({ tool_calls: [{ index, function: { arguments: JSON.stringify(call_.arguments) } }] }));
  }
  payloads.push(chunk({}, (turn.toolCalls ?? []).length > 0 ? "tool_calls" : "stop"));
  const usage = turn.usage ?? { prompt_tokens: 100, completion_tokens: 20 };
  payloads.push({
    id: `chatcmpl-${call}`,
    object: "chat.completion.chunk",
    choices: [],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  });
  const delay = turn.chunkDelayMs === undefined ? {} : { chunkDelayMs: turn.chunkDelayMs };
  return { headers: sseHeaders, chunks: sse(payloads, { done: true }), ...delay };
}
