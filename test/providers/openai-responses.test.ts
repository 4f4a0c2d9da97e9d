import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  agentLoop,
  extendSession,
  initSession,
  isContextOverflowError,
  isProviderError,
  response,
  structuredOutput,
  tool,
  type JsonObject,
  type ModelMessage,
  type ProviderError,
  type Session,
  type ToolSchema,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import {
  fromOpenAIResponsesResponse,
  openaiResponses,
  reasoningSignature,
  streamResponses,
  toOpenAIResponsesRequest,
  type OpenAIResponsesResponse,
} from "simple-agent-loop/openai";
import { expectEveryCallAnsweredOnce, withoutTs, withoutAnswerer } from "../helpers.ts";
import { conformanceSuite, type ErrorKind, type WireTurn } from "./conformance.ts";
import { sse, sseHeaders, startReplayServer, type ReplayResponse, type ReplayServer } from "./replay-server.ts";
import { recordedFixtures } from "./fixtures.ts";
import { openaiResponsesParts } from "./wire-parts.ts";

const { text: fixture, chunks: chunksFile } = recordedFixtures("openai-responses");

type Item = Record<string, unknown> & {
  type?: string;
  role?: string;
  call_id?: string;
  output?: string;
  name?: string;
  arguments?: string;
};
type Body = { input: Item[]; instructions?: string };
type Cassette = {
  interactions: {
    request: { parsed_body?: Body; body?: string };
    response: { parsed_body?: unknown; body?: { string: string } };
  }[];
};
const cassette = (name: string): Cassette => parseYaml(fixture(name)) as Cassette;
const requestBody = (interaction: Cassette["interactions"][number]): Body =>
  interaction.request.parsed_body ?? (JSON.parse(interaction.request.body!) as Body);

function turnResponse(turn: WireTurn, stream: boolean): ReplayResponse {
  const output: Record<string, unknown>[] = [];
  if (turn.text !== undefined) {
    output.push({
      id: "msg_1",
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", annotations: [], text: turn.text }],
    });
  }
  turn.toolCalls?.forEach((call, index) => {
    output.push({
      id: `fc_${index}`,
      type: "function_call",
      status: "completed",
      call_id: call.id,
      name: call.name,
      arguments: JSON.stringify(call.input),
    });
  });
  const cut = turn.stopReason === "max_tokens";
  const usage = {
    input_tokens: turn.usage.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: turn.usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: turn.usage.input + turn.usage.output,
  };
  const final = {
    id: "resp_1",
    object: "response",
    model: "gpt-test",
    status: cut ? "incomplete" : "completed",
    incomplete_details: cut ? { reason: "max_output_tokens" } : null,
    output,
    usage,
  };
  if (!stream) return { body: JSON.stringify(final) };
  const events: unknown[] = [
    { type: "response.created", response: { ...final, status: "in_progress", output: [], usage: null } },
  ];
  output.forEach((item, output_index) => {
    if (item.type === "message") {
      events.push({
        type: "response.output_item.added",
        output_index,
        item: { ...item, status: "in_progress", content: [] },
      });
      const text = turn.text!;
      for (let at = 0; at < text.length; at += 10)
        events.push({
          type: "response.output_text.delta",
          item_id: item.id,
          output_index,
          content_index: 0,
          delta: text.slice(at, at + 10),
        });
      events.push({ type: "response.output_text.done", item_id: item.id, output_index, content_index: 0, text });
    } else {
      events.push({
        type: "response.output_item.added",
        output_index,
        item: { ...item, status: "in_progress", arguments: "" },
      });
      const json = item.arguments as string;
      for (let at = 0; at < json.length; at += 7)
        events.push({
          type: "response.function_call_arguments.delta",
          item_id: item.id,
          output_index,
          delta: json.slice(at, at + 7),
        });
      events.push({ type: "response.function_call_arguments.done", item_id: item.id, output_index, arguments: json });
    }
    events.push({ type: "response.output_item.done", output_index, item });
  });
  events.push({ type: cut ? "response.incomplete" : "response.completed", response: final });
  return { headers: sseHeaders, chunks: sse(events, { withEventNames: true }) };
}

function errorResponse(kind: ErrorKind): ReplayResponse {
  const error = (
    status: number,
    type: string,
    code: string | null,
    message: string,
    headers: Record<string, string> = {},
  ): ReplayResponse => ({
    status,
    headers: { "content-type": "application/json", "x-request-id": "req_test", ...headers },
    body: JSON.stringify({ error: { message, type, param: null, code } }),
  });
  if (kind === "rate_limit") {
    return error(
      429,
      "requests",
      "rate_limit_exceeded",
      "Rate limit reached for gpt-5 in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.",
      { "retry-after": "0" },
    );
  }
  if (kind === "server")
    return error(500, "server_error", null, "The server had an error while processing your request. Sorry about that!");
  if (kind === "context_overflow") {
    return error(
      400,
      "invalid_request_error",
      "context_length_exceeded",
      "Your input exceeds the context window of this model. Please adjust your input and try again.",
    );
  }
  return error(400, "invalid_request_error", "missing_required_parameter", "Missing required parameter: 'model'.");
}

const resultsIn = (body: unknown): { id: string; output: string }[] =>
  (body as Body).input
    .filter((item) => item.type === "function_call_output")
    .map((item) => ({ id: item.call_id!, output: item.output! }));
const callsIn = (body: unknown): { id: string; name: string }[] =>
  (body as Body).input
    .filter((item) => item.type === "function_call")
    .map((item) => ({ id: item.call_id!, name: item.name! }));

conformanceSuite({
  name: "openai-responses",
  contentIn: openaiResponsesParts,
  fetchesImageUrls: true,
  answeringModel: "gpt-test",
  createModel: (origin, options) => openaiResponses({ model: "gpt-test", baseURL: `${origin}/v1`, ...options }),
  readStream: (open) => streamResponses(open),
  turnResponse,
  errorResponse,
  toolResultsIn: resultsIn,
  toolNamesIn: (body) => ((body as { tools?: { name: string }[] }).tools ?? []).map((schema) => schema.name),
  toolCallsIn: callsIn,
  skip: {
    "url-download-off": "the Responses API fetches image and file URLs itself: nothing to download",
    "url-download-rules": "the Responses API fetches image and file URLs itself: nothing to download",
  },
});

const calculator: ToolSchema = {
  name: "calculator",
  description: "A minimal calculator for basic arithmetic. Call it once per step.",
  input_schema: {
    type: "object",
    properties: {
      a: { type: "number" },
      b: { type: "number" },
      op: { type: "string", enum: ["add", "subtract", "multiply", "divide"] },
    },
    required: ["a", "b", "op"],
  },
};
const calculate = ({ a, b, op }: { a: number; b: number; op: string }): string =>
  String(op === "add" ? a + b : op === "subtract" ? a - b : op === "multiply" ? a * b : a / b);

describe("openai-responses: recorded responses", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });
  const apiKey = "sk-openai-test-key-123456";
  const model = (stream = true) => openaiResponses({ model: "gpt-5", baseURL: `${server.origin}/v1`, apiKey, stream });
  const requestsSince = (before: number) => server.requests.slice(before).map((request) => request.body as Body);

  it("replays four streamed turns (vercel-ai): reasoning with its encrypted content, three calls, the answer; reasoning goes back before its call", async () => {
    const events = chunksFile("vercel-ai__openai-reasoning-encrypted-content.1.chunks.txt");
    const turns: Record<string, unknown>[][] = [[]];
    for (const event of events) {
      turns.at(-1)!.push(event);
      if (event.type === "response.completed") turns.push([]);
    }
    turns.pop();
    expect(turns).toHaveLength(4);
    server.enqueue(...turns.map((turn) => ({ headers: sseHeaders, chunks: sse(turn, { withEventNames: true }) })));
    const reasoningDone = events.find(
      (event) => event.type === "response.output_item.done" && (event.item as Item).type === "reasoning",
    )!.item as Item & { id: string; encrypted_content: string };
    const thinkingDeltas: string[] = [];
    const before = server.requests.length;
    const session = await agentLoop(
      model(),
      [calculator],
      initSession("Use the calculator.", "What is (12 + 7) * 3 * 10?"),
      {
        toolHandlers: { calculator: calculate },
        onEvent: (event) => event.type === "thinking-delta" && thinkingDeltas.push(event.delta),
        // Kept whole so the last request can be checked too (compaction would drop the reasoning by then).
        compaction: false,
      },
    );
    const summary =
      "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then multiply the result by 3, and finally multiply that by 10, reporting the final product.";
    expect(withoutAnswerer(withoutTs(session).slice(2))).toStrictEqual([
      {
        type: "thinking",
        content: summary,
        provider: "openai-responses",
        signature: reasoningSignature(reasoningDone.id, reasoningDone.encrypted_content),
      },
      {
        type: "tool_call",
        id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
        name: "calculator",
        input: { a: 12, b: 7, op: "add" },
        stopReason: "tool_use",
        usage: { inputTokens: 134, outputTokens: 28 },
      },
      { type: "tool_result", id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn", output: "19" },
      {
        type: "tool_call",
        id: "call_Q6pW65MUgW9vF59BmItYGos3",
        name: "calculator",
        input: { a: 19, b: 3, op: "multiply" },
        stopReason: "tool_use",
        usage: { inputTokens: 221, outputTokens: 26 },
      },
      { type: "tool_result", id: "call_Q6pW65MUgW9vF59BmItYGos3", output: "57" },
      {
        type: "tool_call",
        id: "call_Zl5vIMnD7dVAjgU6FkhmiCZh",
        name: "calculator",
        input: { a: 57, b: 10, op: "multiply" },
        stopReason: "tool_use",
        usage: { inputTokens: 260, outputTokens: 26 },
      },
      { type: "tool_result", id: "call_Zl5vIMnD7dVAjgU6FkhmiCZh", output: "570" },
      {
        role: "assistant",
        content: "The final result is **570**.",
        stopReason: "end_turn",
        usage: { inputTokens: 299, outputTokens: 12 },
      },
    ]);
    expect(thinkingDeltas.join("")).toBe(summary);
    const sent = requestsSince(before);
    expect(sent).toHaveLength(4);
    expect(sent[1]!.input).toStrictEqual([
      { role: "user", content: "What is (12 + 7) * 3 * 10?" },
      {
        type: "reasoning",
        id: reasoningDone.id,
        summary: [{ type: "summary_text", text: summary }],
        encrypted_content: reasoningDone.encrypted_content,
      },
      {
        type: "function_call",
        call_id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
        name: "calculator",
        arguments: '{"a":12,"b":7,"op":"add"}',
      },
      { type: "function_call_output", call_id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn", output: "19" },
    ]);
    expect(sent[3]!.input.map((item) => item.type ?? item.role)).toStrictEqual([
      "user",
      "reasoning",
      ...[
        "function_call",
        "function_call_output",
        "function_call",
        "function_call_output",
        "function_call",
        "function_call_output",
      ],
    ]);
    expect(resultsIn(sent[3])).toStrictEqual([
      { id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn", output: "19" },
      { id: "call_Q6pW65MUgW9vF59BmItYGos3", output: "57" },
      { id: "call_Zl5vIMnD7dVAjgU6FkhmiCZh", output: "570" },
    ]);
    for (const body of sent)
      expect(body).toMatchObject({
        model: "gpt-5",
        store: false,
        include: ["reasoning.encrypted_content"],
        stream: true,
        instructions: "Use the calculator.",
      });
    for (const body of sent) expect(body).not.toHaveProperty("previous_response_id");
  });

  it("replays a two-turn reasoning + tool exchange (pydantic-ai, not streamed): turn 2 carries what the recorded turn 2 carried", async () => {
    const [first, second] = cassette("pydantic-ai__test_openai_responses_thinking_with_tool_calls.yaml").interactions;
    server.enqueue(
      { body: JSON.stringify(first!.response.parsed_body) },
      { body: JSON.stringify(second!.response.parsed_body) },
    );
    const recordedFirst = requestBody(first!);
    const recorded = requestBody(second!);
    const updatePlan: ToolSchema = {
      name: "update_plan",
      description: "",
      input_schema: { type: "object", properties: { plan: { type: "string" } }, required: ["plan"] },
    };
    const session = initSession(recordedFirst.instructions!, recordedFirst.input[0]!.content as string);
    const before = server.requests.length;
    await agentLoop(model(false), [updatePlan], session, { toolHandlers: { update_plan: () => "plan updated" } });
    const sent = requestsSince(before)[1]!;

    const recordedReasoning = recorded.input.find((item) => item.type === "reasoning")! as Item & {
      summary: { text: string }[];
    };
    const recordedCall = recorded.input.find((item) => item.type === "function_call")!;
    expect(sent.instructions).toBe(recorded.instructions);
    expect(sent.input.map((item) => item.type ?? item.role)).toStrictEqual([
      "user",
      "reasoning",
      "function_call",
      "function_call_output",
    ]);
    expect(sent.input[0]).toStrictEqual(recorded.input[0]);
    expect(sent.input[1]).toStrictEqual({
      type: "reasoning",
      id: recordedReasoning.id,
      encrypted_content: recordedReasoning.encrypted_content,
      summary: [{ type: "summary_text", text: recordedReasoning.summary.map((part) => part.text).join("\n\n") }],
    });
    expect({ ...sent.input[2], arguments: JSON.parse(sent.input[2]!.arguments!) as unknown }).toStrictEqual({
      type: "function_call",
      call_id: recordedCall.call_id,
      name: recordedCall.name,
      arguments: JSON.parse(recordedCall.arguments!) as unknown,
    });
    expect(resultsIn(sent)).toStrictEqual(resultsIn(recorded));

    const last = session.messages.at(-1)!;
    expect(last).toMatchObject({
      role: "assistant",
      stopReason: "end_turn",
      usage: { inputTokens: 2087, outputTokens: 124, cacheReadTokens: 2048 },
    });
    expect((last as { content: string }).content).toMatch(/^Softly old fountains/);
    expect(session.messages[2]).toMatchObject({ type: "thinking", provider: "openai-responses" });
    expect(session.messages[3]).toMatchObject({
      type: "tool_call",
      usage: { inputTokens: 124, outputTokens: 1926, reasoningTokens: 1792 },
    });
  });

  it("replays two parallel calls and their results paired by call_id (pydantic-ai, not streamed)", async () => {
    const [first, second] = cassette("pydantic-ai__test_openai_responses_model_retry.yaml").interactions;
    server.enqueue(
      { body: JSON.stringify(first!.response.parsed_body) },
      { body: JSON.stringify(second!.response.parsed_body) },
    );
    const recorded = requestBody(second!);
    const recordedOutputs = new Map(resultsIn(recorded).map((result) => [result.id, result.output]));
    const getLocation: ToolSchema = {
      name: "get_location",
      description: "",
      input_schema: { type: "object", properties: { loc_name: { type: "string" } }, required: ["loc_name"] },
    };
    const before = server.requests.length;
    const session = await agentLoop(
      model(false),
      [getLocation],
      initSession("s", "What is the location of Londos and London?"),
      {
        toolHandlers: {
          get_location: (_input: unknown, { id }: { id: string }) => recordedOutputs.get(id) ?? "unexpected call id",
        },
      },
    );
    const sent = requestsSince(before)[1]!;
    expect(callsIn(sent)).toStrictEqual(callsIn(recorded));
    expect(resultsIn(sent)).toStrictEqual(resultsIn(recorded));
    expect(
      sent.input.filter((item) => item.type === "function_call").map((item) => JSON.parse(item.arguments!) as unknown),
    ).toStrictEqual([{ loc_name: "Londos" }, { loc_name: "London" }]);
    expectEveryCallAnsweredOnce(session);
    expect(response(session)).toMatchObject({ stopReason: "end_turn", usage: { inputTokens: 335, outputTokens: 44 } });
  });

  it("replays two streamed turns with parallel calls from raw SSE (mirascope): the second request pairs both results", async () => {
    const [first, second] = cassette(
      "mirascope__test_call_with_tools__openai_gpt_4o_responses__stream.yaml",
    ).interactions;
    server.enqueue(
      { headers: sseHeaders, body: first!.response.body!.string },
      { headers: sseHeaders, body: second!.response.body!.string },
    );
    const recorded = requestBody(second!);
    const secrets: Record<string, string> = { mellon: "Welcome to Moria!", radiance: "Life before Death" };
    const secretTool: ToolSchema = {
      name: "secret_retrieval_tool",
      description: "A tool that requires a password to retrieve a secret.",
      input_schema: { type: "object", properties: { password: { type: "string" } }, required: ["password"] },
    };
    const before = server.requests.length;
    const session = await agentLoop(
      model(),
      [secretTool],
      initSession("Use parallel tool calling.", recorded.input[1]!.content as string),
      {
        toolHandlers: {
          secret_retrieval_tool: ({ password }: { password: string }) => secrets[password] ?? "no secret",
        },
      },
    );
    const sent = requestsSince(before)[1]!;
    expect(callsIn(sent)).toStrictEqual(callsIn(recorded));
    expect(resultsIn(sent)).toStrictEqual(resultsIn(recorded));
    expect(withoutAnswerer(withoutTs(session).slice(2, 4))).toStrictEqual([
      {
        type: "tool_call",
        id: "call_sKC7OABqf2A2PTLCm0CLeRWV",
        name: "secret_retrieval_tool",
        input: { password: "mellon" },
      },
      {
        type: "tool_call",
        id: "call_OdR3s3xop0vtgkDyWRMLafuH",
        name: "secret_retrieval_tool",
        input: { password: "radiance" },
        stopReason: "tool_use",
        usage: { inputTokens: 36, outputTokens: 54 },
      },
    ]);
    expect(response(session)).toMatchObject({ stopReason: "end_turn", usage: { inputTokens: 136, outputTokens: 32 } });
    expect(response(session)?.content).toContain("Welcome to Moria!");
  });

  it("parses streamed reasoning without a summary as redacted thinking, and usage with reasoning tokens (pydantic-ai)", async () => {
    const [only] = cassette("pydantic-ai__test_openai_responses_streaming_usage.yaml").interactions;
    server.enqueue({ headers: sseHeaders, body: only!.response.body!.string });
    const session = await agentLoop(model(), [], initSession("s", "Calculate 100 * 200 / 3"), {
      maxIterations: 1,
      toolHandlers: { final_result: () => "ok" },
    }).catch((error: { session: Session }) => error.session);
    const [thinking, call] = withoutTs(session).slice(2, 4) as unknown as [
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    expect(thinking).toMatchObject({ type: "thinking", content: "", redacted: true, provider: "openai-responses" });
    expect(JSON.parse(thinking.signature as string)).toMatchObject({
      id: "rs_0050471a34b36ae60068c97bac4dcc819595fd0f80d6b3c405",
      encrypted_content: expect.stringMatching(/^gAAAAA/),
    });
    expect(withoutAnswerer(call)).toStrictEqual({
      type: "tool_call",
      id: "call_CWXgs68YprAjp6t0371hiPOI",
      name: "final_result",
      input: { result: 6666 },
      stopReason: "tool_use",
      usage: { inputTokens: 53, outputTokens: 469, reasoningTokens: 448 },
    });
  });

  it("parses a non-streaming o3 response: reasoning (hidden) then a function call, with usage", () => {
    const body = JSON.parse(
      fixture("vercel-ai__issue-7082-o3-optional-tool-parameters.json"),
    ) as OpenAIResponsesResponse;
    expect(withoutAnswerer(fromOpenAIResponsesResponse(body))).toStrictEqual([
      {
        type: "thinking",
        content: "",
        provider: "openai-responses",
        redacted: true,
        signature: JSON.stringify({
          id: "rs_0d742adaa831b789006a5f4531387481a08e8bb2e23a707ded",
          encrypted_content: "[redacted]",
        }),
      },
      {
        type: "tool_call",
        id: "call_TXveU5dZ1lW6uhMbjhUIE9Gq",
        name: "semantic_scholar_search",
        input: { query: "machine learning", limit: 10, offset: 0, year: 0 },
        stopReason: "tool_use",
        usage: { inputTokens: 114, outputTokens: 284, reasoningTokens: 192 },
      },
    ]);
  });

  it("a streamed insufficient_quota error event is a typed ProviderError that is not retried", async () => {
    server.enqueue({
      headers: sseHeaders,
      chunks: sse(chunksFile("vercel-ai__openai-error.1.chunks.txt"), { withEventNames: true }),
    });
    const before = server.requests.length;
    const error = (await agentLoop(model(), [], initSession("s", "u")).catch(
      (thrown: unknown) => thrown,
    )) as ProviderError;
    expect(isProviderError(error)).toBe(true);
    expect(error).toMatchObject({ provider: "openai-responses", code: "insufficient_quota", retryable: false });
    expect(error.message).toContain("You exceeded your current quota");
    expect(server.requests.length - before).toBe(1);
  });

  it("an HTTP 429 insufficient_quota body is not retryable either, whatever the status says", async () => {
    server.enqueue({
      status: 429,
      headers: { "content-type": "application/json", "x-request-id": "req_quota" },
      body: fixture("vercel-ai__openai-error.1.json"),
    });
    const before = server.requests.length;
    const error = (await agentLoop(model(false), [], initSession("s", "u")).catch(
      (thrown: unknown) => thrown,
    )) as ProviderError;
    expect(error).toMatchObject({
      name: "ProviderError",
      status: 429,
      code: "insufficient_quota",
      retryable: false,
      requestId: "req_quota",
    });
    expect(server.requests.length - before).toBe(1);
  });

  it("a response.failed server_error is retried; a failed context_length_exceeded is a ContextOverflowError", async () => {
    const failed = (code: string, message: string): ReplayResponse => ({
      headers: sseHeaders,
      chunks: sse(
        [
          { type: "response.created", response: { status: "in_progress" } },
          { type: "response.failed", response: { status: "failed", error: { code, message } } },
        ],
        { withEventNames: true },
      ),
    });
    server.enqueue(
      failed("server_error", "The model failed. Please try again in 2ms."),
      turnResponse({ text: "fine", stopReason: "end_turn", usage: { input: 1, output: 1 } }, true),
    );
    const retried: string[] = [];
    const session = await agentLoop(model(), [], initSession("s", "u"), {
      onEvent: (event) => event.type === "retry" && retried.push(`${event.error} after ${event.delayMs}ms`),
    });
    expect(retried).toStrictEqual(["openai-responses: The model failed. Please try again in 2ms. after 2ms"]);
    expect(response(session)?.content).toBe("fine");

    server.enqueue(failed("context_length_exceeded", "Your input exceeds the context window of this model."));
    const overflow = await agentLoop(model(), [], initSession("s", "u")).catch((thrown: unknown) => thrown);
    expect(isContextOverflowError(overflow)).toBe(true);
  });

  it("never runs a call whose streamed arguments are garbled: a completed turn with one is a retryable error", async () => {
    const garbled = [
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { id: "fc_1", type: "function_call", call_id: "call_1", name: "calculator", arguments: "" },
      },
      { type: "response.function_call_arguments.delta", output_index: 0, item_id: "fc_1", delta: '{"a":1,' },
      {
        type: "response.output_item.done",
        output_index: 0,
        item: { id: "fc_1", type: "function_call", call_id: "call_1", name: "calculator", arguments: '{"a":1,' },
      },
      {
        type: "response.completed",
        response: { status: "completed", output: [], usage: { input_tokens: 1, output_tokens: 1 } },
      },
    ];
    server.enqueue(
      { headers: sseHeaders, chunks: sse(garbled) },
      turnResponse({ text: "recovered", stopReason: "end_turn", usage: { input: 1, output: 1 } }, true),
    );
    let ran = false;
    const session = await agentLoop(model(), [calculator], initSession("s", "u"), {
      toolHandlers: { calculator: () => (ran = true) },
      retry: { initialDelayMs: 1 },
    });
    expect(ran).toBe(false);
    expect(withoutAnswerer(withoutTs(session).slice(2))).toStrictEqual([
      { role: "assistant", content: "recovered", stopReason: "end_turn", usage: { inputTokens: 1, outputTokens: 1 } },
    ]);
  });

  it("streams summary parts, text and a refusal as deltas; a refusal ends the turn as refusal", async () => {
    const events = [
      { type: "response.output_item.added", output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [] } },
      {
        type: "response.reasoning_summary_text.delta",
        output_index: 0,
        item_id: "rs_1",
        summary_index: 0,
        delta: "First part.",
      },
      {
        type: "response.reasoning_summary_text.delta",
        output_index: 0,
        item_id: "rs_1",
        summary_index: 1,
        delta: "Second part.",
      },
      {
        type: "response.output_item.done",
        output_index: 0,
        item: {
          id: "rs_1",
          type: "reasoning",
          encrypted_content: "enc",
          summary: [
            { type: "summary_text", text: "First part." },
            { type: "summary_text", text: "Second part." },
          ],
        },
      },
      {
        type: "response.output_item.added",
        output_index: 1,
        item: { id: "msg_1", type: "message", role: "assistant", content: [] },
      },
      {
        type: "response.refusal.delta",
        output_index: 1,
        item_id: "msg_1",
        content_index: 0,
        delta: "I can't help with that.",
      },
      {
        type: "response.output_item.done",
        output_index: 1,
        item: {
          id: "msg_1",
          type: "message",
          role: "assistant",
          content: [{ type: "refusal", refusal: "I can't help with that." }],
        },
      },
      {
        type: "response.completed",
        response: {
          status: "completed",
          output: [{ type: "message", content: [{ type: "refusal", refusal: "I can't help with that." }] }],
          usage: { input_tokens: 5, output_tokens: 7, input_tokens_details: { cached_tokens: 3 } },
        },
      },
    ];
    server.enqueue({ headers: sseHeaders, chunks: sse(events) });
    const deltas: string[] = [];
    const session = await agentLoop(model(), [], initSession("s", "u"), {
      onEvent: (event) => (event.type === "thinking-delta" || event.type === "text-delta") && deltas.push(event.delta),
    });
    expect(deltas).toStrictEqual(["First part.", "\n\nSecond part.", "I can't help with that."]);
    expect(withoutTs(session).slice(2)).toStrictEqual([
      {
        type: "thinking",
        content: "First part.\n\nSecond part.",
        provider: "openai-responses",
        signature: reasoningSignature("rs_1", "enc"),
      },
      {
        role: "assistant",
        content: "I can't help with that.",
        stopReason: "refusal",
        usage: { inputTokens: 5, outputTokens: 7, cacheReadTokens: 3 },
        // The response names no model: the one asked for answered.
        model: "gpt-5",
      },
    ]);
  });

  it("POSTs to {baseURL}/responses with a bearer key; never the key in errors", async () => {
    server.enqueue(
      turnResponse({ text: "hi", stopReason: "end_turn", usage: { input: 1, output: 1 } }, true),
      errorResponse("invalid_request"),
    );
    const before = server.requests.length;
    await agentLoop(model(), [], initSession("s", "u"));
    const request = server.requests[before]!;
    expect(request.url).toBe("/v1/responses");
    expect(request.headers.authorization).toBe(`Bearer ${apiKey}`);
    expect(request.body).toStrictEqual({
      model: "gpt-5",
      input: [{ role: "user", content: "u" }],
      instructions: "s",
      store: false,
      include: ["reasoning.encrypted_content"],
      stream: true,
    });
    const error = (await agentLoop(model(), [], initSession("s", "u")).catch(
      (thrown: unknown) => thrown,
    )) as ProviderError;
    expect(error).toMatchObject({ status: 400, code: "missing_required_parameter", requestId: "req_test" });
    expect(JSON.stringify(error) + error.message).not.toContain(apiKey);
  });

  it("says which variable to set when there is no API key, and reads OPENAI_API_KEY at call time", async () => {
    const previous = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      const invoke = openaiResponses({ model: "m", baseURL: `${server.origin}/v1` });
      await expect(agentLoop(invoke, [], initSession("s", "u"))).rejects.toThrow("set OPENAI_API_KEY");
      process.env.OPENAI_API_KEY = "sk-from-env-0123456789";
      server.enqueue(turnResponse({ text: "hi", stopReason: "end_turn", usage: { input: 1, output: 1 } }, true));
      const before = server.requests.length;
      await agentLoop(invoke, [], initSession("s", "u"));
      expect(server.requests[before]!.headers.authorization).toBe("Bearer sk-from-env-0123456789");
    } finally {
      if (previous === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = previous;
    }
  });
});

describe("openai-responses: conversion rules", () => {
  const convert = (session: Session, tools: ToolSchema[] = []) =>
    toOpenAIResponsesRequest(session, tools, { model: "m", stream: false });
  const signed = (id: string, encrypted: string) =>
    ({
      type: "thinking",
      content: `reasoning ${id}`,
      signature: reasoningSignature(id, encrypted),
      provider: "openai-responses",
    }) as const;

  it("system messages become instructions, joined in order; none leaves instructions out", () => {
    const session = initSession("You are precise.", "Do it");
    extendSession(session, { role: "system", content: "Answer in French." });
    expect(convert(session)).toMatchObject({
      instructions: "You are precise.\n\nAnswer in French.",
      input: [{ role: "user", content: "Do it" }],
    });
    expect(convert({ messages: [{ role: "user", content: "hi" }] })).not.toHaveProperty("instructions");
  });

  it("user text is a user message item with string content", () => {
    expect(convert(initSession("s", "What now?")).input).toStrictEqual([{ role: "user", content: "What now?" }]);
  });

  it("assistant text is an assistant message item with output_text; empty and aborted text is left out", () => {
    const session = initSession("s", "u");
    extendSession(session, { role: "assistant", content: "Hello." });
    extendSession(session, { role: "user", content: "again" });
    extendSession(session, { role: "assistant", content: "", stopReason: "aborted" });
    expect(convert(session).input).toStrictEqual([
      { role: "user", content: "u" },
      { role: "assistant", content: [{ type: "output_text", text: "Hello." }] },
      { role: "user", content: "again" },
    ]);
  });

  it("reasoning items come back as thinking messages: summary joined as content, id and encrypted content in the signature", () => {
    const messages = fromOpenAIResponsesResponse({
      status: "completed",
      output: [
        {
          type: "reasoning",
          id: "rs_9",
          encrypted_content: "gAAA-secret",
          summary: [
            { type: "summary_text", text: "Plan A." },
            { type: "summary_text", text: "Plan B." },
          ],
        },
        { type: "message", id: "msg_9", content: [{ type: "output_text", text: "Done." }] },
      ],
    });
    expect(messages).toStrictEqual([
      {
        type: "thinking",
        content: "Plan A.\n\nPlan B.",
        provider: "openai-responses",
        signature: '{"id":"rs_9","encrypted_content":"gAAA-secret"}',
      },
      { role: "assistant", content: "Done.", stopReason: "end_turn" },
    ]);
  });

  it("own signed reasoning goes back as a reasoning item before the function calls it led to", () => {
    const session = initSession("s", "u");
    extendSession(session, signed("rs_1", "enc-1"));
    extendSession(session, { type: "tool_call", id: "call_1", name: "t", input: { n: 1 } });
    extendSession(session, { type: "tool_result", id: "call_1", output: "r" });
    expect(convert(session).input.slice(1)).toStrictEqual([
      {
        type: "reasoning",
        id: "rs_1",
        summary: [{ type: "summary_text", text: "reasoning rs_1" }],
        encrypted_content: "enc-1",
      },
      { type: "function_call", call_id: "call_1", name: "t", arguments: '{"n":1}' },
      { type: "function_call_output", call_id: "call_1", output: "r" },
    ]);
  });

  it("drops reasoning that cannot go back: foreign, unsigned, compacted, or with no output item after it", () => {
    const session = initSession("s", "u");
    for (const thinking of [
      { type: "thinking", content: "anthropic thinking", signature: "sig", provider: "anthropic" },
      { type: "thinking", content: "untagged", signature: "sig" },
      { type: "thinking", content: "no signature", provider: "openai-responses" },
      { ...signed("rs_cut", "enc"), compacted: true },
    ] as const) {
      extendSession(session, thinking);
    }
    extendSession(session, { role: "assistant", content: "answer" });
    extendSession(session, { role: "user", content: "next" });
    extendSession(session, signed("rs_aborted", "enc"));
    extendSession(session, { role: "assistant", content: "", stopReason: "aborted" });
    extendSession(session, { role: "user", content: "go on" });
    expect(convert(session).input).toStrictEqual([
      { role: "user", content: "u" },
      { role: "assistant", content: [{ type: "output_text", text: "answer" }] },
      { role: "user", content: "next" },
      { role: "user", content: "go on" },
    ]);
  });

  it("a signature that is not our JSON is sent back whole as the encrypted content, without an id", () => {
    const session = initSession("s", "u");
    extendSession(session, {
      type: "thinking",
      content: "",
      signature: "gAAAA-raw",
      provider: "openai-responses",
      redacted: true,
    });
    extendSession(session, { role: "assistant", content: "ok" });
    expect(convert(session).input[1]).toStrictEqual({ type: "reasoning", summary: [], encrypted_content: "gAAAA-raw" });
  });

  it("function calls and outputs pair by call_id, output as a string, foreign ids normalized alike on both", () => {
    const session = initSession("s", "u");
    extendSession(session, { type: "tool_call", id: "toolu.01/odd id", name: "lookup", input: { word: "x" } });
    extendSession(session, { type: "tool_call", id: "call_plain", name: "lookup", input: { word: "y" } });
    extendSession(session, { type: "tool_result", id: "toolu.01/odd id", output: { found: true }, isError: false });
    extendSession(session, { type: "tool_result", id: "call_plain", output: "Error: boom", isError: true });
    const input = convert(session).input.slice(1) as Item[];
    const odd = input[0]!.call_id!;
    expect(odd).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(input).toStrictEqual([
      { type: "function_call", call_id: odd, name: "lookup", arguments: '{"word":"x"}' },
      { type: "function_call", call_id: "call_plain", name: "lookup", arguments: '{"word":"y"}' },
      { type: "function_call_output", call_id: odd, output: '{"found":true}' },
      { type: "function_call_output", call_id: "call_plain", output: "Error: boom" },
    ]);
  });

  it("answers orphan calls and drops orphan results before converting", () => {
    const session = initSession("s", "u");
    extendSession(session, { type: "tool_call", id: "a", name: "t", input: {} });
    extendSession(session, { type: "tool_result", id: "ghost", output: "x" });
    extendSession(session, { role: "user", content: "continue" });
    expect(convert(session).input.slice(1)).toStrictEqual([
      { type: "function_call", call_id: "a", name: "t", arguments: "{}" },
      { type: "function_call_output", call_id: "a", output: "Error: no result was recorded for this tool call." },
      { role: "user", content: "continue" },
    ]);
  });

  it("stop reasons: completed with calls is tool_use, completed is end_turn, incomplete for max_output_tokens is max_tokens, content_filter stays", () => {
    const call = { type: "function_call", call_id: "c", name: "t", arguments: "{}" };
    const text = { type: "message", content: [{ type: "output_text", text: "partial" }] };
    const last = (body: OpenAIResponsesResponse) =>
      fromOpenAIResponsesResponse(body).at(-1) as ModelMessage & { stopReason?: string; rawStopReason?: string };
    expect(last({ status: "completed", output: [call] })).toMatchObject({ stopReason: "tool_use" });
    expect(last({ status: "completed", output: [text] })).toStrictEqual({
      role: "assistant",
      content: "partial",
      stopReason: "end_turn",
    });
    expect(
      last({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output: [text] }),
    ).toStrictEqual({ role: "assistant", content: "partial", stopReason: "max_tokens" });
    const filtered = last({ status: "incomplete", incomplete_details: { reason: "content_filter" }, output: [text] });
    expect(filtered).toMatchObject({ stopReason: "content_filter" });
    expect(filtered).not.toHaveProperty("rawStopReason");
  });

  it("a call cut by max_output_tokens keeps an empty input (the loop will not run it); in a completed response it is an error", () => {
    const cut = { type: "function_call", call_id: "c", name: "t", arguments: '{"a":' };
    expect(
      fromOpenAIResponsesResponse({
        status: "incomplete",
        incomplete_details: { reason: "max_output_tokens" },
        output: [cut],
      }),
    ).toStrictEqual([{ type: "tool_call", id: "c", name: "t", input: {}, stopReason: "max_tokens" }]);
    expect(() => fromOpenAIResponsesResponse({ status: "completed", output: [cut] })).toThrow(/invalid JSON arguments/);
  });

  it("usage: input includes cached tokens, output includes reasoning tokens, as OpenAI counts them", () => {
    const [message] = fromOpenAIResponsesResponse({
      status: "completed",
      output: [],
      usage: {
        input_tokens: 100,
        input_tokens_details: { cached_tokens: 80 },
        output_tokens: 50,
        output_tokens_details: { reasoning_tokens: 30 },
      },
    });
    expect(message).toStrictEqual({
      role: "assistant",
      content: "",
      stopReason: "end_turn",
      usage: { inputTokens: 100, outputTokens: 50, cacheReadTokens: 80, reasoningTokens: 30 },
    });
  });

  it("request options: max_output_tokens, temperature, reasoning effort and summary; tools as non-strict functions", () => {
    const request = toOpenAIResponsesRequest(
      initSession("s", "u"),
      [{ name: "t", description: "d", input_schema: { type: "object" }, eager: false }],
      {
        model: "gpt-5",
        maxTokens: 1000,
        temperature: 0.2,
        reasoningEffort: "low",
        reasoningSummary: "auto",
      },
    );
    expect(request).toMatchObject({
      max_output_tokens: 1000,
      temperature: 0.2,
      reasoning: { effort: "low", summary: "auto" },
      tools: [{ type: "function", name: "t", description: "d", parameters: { type: "object" }, strict: false }],
      stream: true,
    });
    expect(request.tools![0]).not.toHaveProperty("eager");
  });

  it("the request for a session with every message kind (snapshot)", () => {
    const session = initSession("You are a careful assistant.", "Look up alpha, then summarize.");
    extendSession(session, signed("rs_a", "enc-a"));
    extendSession(session, { role: "assistant", content: "Looking it up." });
    extendSession(session, { type: "tool_call", id: "call_a", name: "lookup", input: { word: "alpha" } });
    extendSession(session, { type: "tool_result", id: "call_a", output: { definition: "first letter" } });
    extendSession(session, { type: "thinking", content: "foreign", signature: "anthropic-sig", provider: "anthropic" });
    extendSession(session, { role: "assistant", content: "Alpha is the first letter.", stopReason: "end_turn" });
    extendSession(session, { role: "user", content: "Thanks!" });
    const lookup: ToolSchema = {
      name: "lookup",
      description: "Look a word up.",
      input_schema: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
    };
    expect(
      toOpenAIResponsesRequest(session, [lookup], {
        model: "gpt-5",
        reasoningEffort: "medium",
        reasoningSummary: "auto",
        maxTokens: 4096,
      }),
    ).toMatchSnapshot();
  });

  it("a session recorded with another provider converts without error, its reasoning dropped", async () => {
    const session = initSession("s", "u");
    extendSession(session, { type: "thinking", content: "hm", signature: "seed-sig" });
    extendSession(session, {
      type: "thinking",
      content: "",
      signature: "opaque",
      provider: "anthropic",
      redacted: true,
    });
    extendSession(session, { type: "tool_call", id: "toolu_01ABC", name: "t", input: {} });
    extendSession(session, { type: "tool_result", id: "toolu_01ABC", output: "r" });
    const model = scriptedModel([[{ role: "assistant", content: "ok" }]]);
    await agentLoop(model, [], session);
    expect(convert(model.calls[0]!).input.map((item) => ("type" in item ? item.type : item.role))).toStrictEqual([
      "user",
      "function_call",
      "function_call_output",
    ]);
  });
});

describe.skipIf(!process.env.OPENAI_API_KEY)("openai-responses: live", () => {
  it("runs a one-tool agent against the real API, reasoning sent back between turns", async () => {
    const add = tool({
      name: "add",
      description: "Add two integers.",
      inputSchema: {
        type: "object",
        properties: { a: { type: "integer" }, b: { type: "integer" } },
        required: ["a", "b"],
      },
      handler: (input) => String(Number(input.a) + Number(input.b)),
    });
    const invoke = openaiResponses({ model: process.env.OPENAI_MODEL ?? "gpt-5-mini", reasoningEffort: "low" });
    const session = await agentLoop(
      invoke,
      [add],
      initSession("Use the add tool for arithmetic.", "What is 1234 + 4321? Use the tool."),
      { maxIterations: 4 },
    );
    expectEveryCallAnsweredOnce(session);
    expect(
      session.messages.some((message) => "type" in message && message.type === "tool_call" && message.name === "add"),
    ).toBe(true);
    expect(response(session)?.content).toContain("5555");
  });
});

describe("openai-responses: native structured output", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });
  const forecast: JsonObject = {
    type: "object",
    properties: { city: { type: "string" }, celsius: { type: "number" } },
    required: ["city", "celsius"],
  };
  const usage = { input: 10, output: 5 };
  type OutputBody = Body & { text?: unknown; tools?: { name: string }[] };

  for (const stream of [true, false]) {
    it(`a run with output: schema sends it as text.format on every call, without the instruction; the answer is parsed into output (${stream ? "streamed" : "not streamed"})`, async () => {
      expect(openaiResponses({ model: "gpt-5" }).structuredOutput).toBe("native");
      server.enqueue(
        turnResponse(
          {
            toolCalls: [{ id: "call_c", name: "calculator", input: { a: 20, b: 1, op: "add" } }],
            stopReason: "tool_use",
            usage,
          },
          stream,
        ),
        turnResponse({ text: '{"city":"Paris","celsius":21}', stopReason: "end_turn", usage }, stream),
      );
      const before = server.requests.length;
      const session = await agentLoop(
        openaiResponses({ model: "gpt-5", baseURL: `${server.origin}/v1`, apiKey: "sk-test", stream }),
        [calculator],
        initSession("You forecast.", "Paris?"),
        {
          toolHandlers: { calculator: calculate },
          output: forecast,
        },
      );
      const bodies = server.requests.slice(before).map((request) => request.body as OutputBody);
      expect(bodies).toHaveLength(2);
      for (const body of bodies) {
        expect(body.text).toStrictEqual({
          format: { type: "json_schema", name: "output", schema: forecast, strict: false },
        });
        expect(body.instructions).toBe("You forecast.");
        expect(body.tools?.map((definition) => definition.name)).toStrictEqual(["calculator"]);
      }
      expect(withoutAnswerer(withoutTs(session).at(-1))).toStrictEqual({
        role: "assistant",
        content: '{"city":"Paris","celsius":21}',
        output: { city: "Paris", celsius: 21 },
        stopReason: "end_turn",
        usage: { inputTokens: 10, outputTokens: 5 },
      });
      expect(structuredOutput(session)).toStrictEqual({ city: "Paris", celsius: 21 });
    });
  }

  it("a run without output sends no text.format", async () => {
    server.enqueue(turnResponse({ text: "hi", stopReason: "end_turn", usage }, true));
    const before = server.requests.length;
    await agentLoop(
      openaiResponses({ model: "gpt-5", baseURL: `${server.origin}/v1`, apiKey: "sk-test" }),
      [],
      initSession("s", "u"),
    );
    expect(server.requests[before]!.body).not.toHaveProperty("text");
  });

  it("the converter: an object schema becomes text.format; any other root (which the format refuses) the instruction, first in instructions", () => {
    const session = initSession("s", "u");
    const native = toOpenAIResponsesRequest(session, [], { model: "m", output: { jsonSchema: forecast } });
    expect(native).toMatchObject({
      instructions: "s",
      text: { format: { type: "json_schema", name: "output", schema: forecast, strict: false } },
    });
    const list: JsonObject = { type: "array", items: { type: "string" } };
    const instructed = toOpenAIResponsesRequest(session, [], { model: "m", output: { jsonSchema: list } });
    expect(instructed).not.toHaveProperty("text");
    expect(instructed.instructions?.split("\n\n")).toStrictEqual([expect.stringContaining(JSON.stringify(list)), "s"]);
  });
});
