import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  agentLoop,
  extendSession,
  initSession,
  isContextOverflowError,
  isProviderError,
  type JsonValue,
  type Message,
  type ProviderError,
  type Session,
  type ToolSchema,
} from "simple-agent-loop";
import {
  bedrock,
  fromBedrockResponse,
  streamConverse,
  toBedrockRequest,
  type BedrockResponse,
} from "simple-agent-loop/bedrock";
import { signRequest } from "../../src/providers/bedrock/sign.ts";
import { withoutTs, withoutAnswerer } from "../helpers.ts";
import { conformanceSuite, liveAgentSuite, type ErrorKind, type WireTurn } from "./conformance.ts";
import { eventFrames, frame } from "./event-stream-frames.ts";
import { startReplayServer, type ReplayResponse, type ReplayServer } from "./replay-server.ts";
import { recordedFixtures } from "./fixtures.ts";
import { bedrockParts } from "./wire-parts.ts";

const { text: fixture, chunks: chunksFile } = recordedFixtures("bedrock");

function exceptionFrame(type: string, message: string): Uint8Array {
  return frame(
    { ":exception-type": type, ":content-type": "application/json", ":message-type": "exception" },
    JSON.stringify({ message }),
  );
}

const streamHeaders = { "content-type": "application/vnd.amazon.eventstream" };

function turnResponse(turn: WireTurn, stream: boolean): ReplayResponse {
  const usage = {
    inputTokens: turn.usage.input,
    outputTokens: turn.usage.output,
    totalTokens: turn.usage.input + turn.usage.output,
  };
  if (!stream) {
    const content: unknown[] = [];
    if (turn.text !== undefined) content.push({ text: turn.text });
    for (const call of turn.toolCalls ?? [])
      content.push({ toolUse: { toolUseId: call.id, name: call.name, input: call.input } });
    return {
      body: JSON.stringify({
        output: { message: { role: "assistant", content } },
        stopReason: turn.stopReason,
        usage,
        metrics: { latencyMs: 1 },
      }),
    };
  }
  const events: Record<string, unknown>[] = [{ messageStart: { role: "assistant" } }];
  let index = 0;
  if (turn.text !== undefined) {
    for (let at = 0; at < turn.text.length; at += 10)
      events.push({ contentBlockDelta: { contentBlockIndex: index, delta: { text: turn.text.slice(at, at + 10) } } });
    events.push({ contentBlockStop: { contentBlockIndex: index++ } });
  }
  for (const call of turn.toolCalls ?? []) {
    events.push({
      contentBlockStart: { contentBlockIndex: index, start: { toolUse: { toolUseId: call.id, name: call.name } } },
    });
    const json = JSON.stringify(call.input);
    for (let at = 0; at < json.length; at += 7)
      events.push({
        contentBlockDelta: { contentBlockIndex: index, delta: { toolUse: { input: json.slice(at, at + 7) } } },
      });
    events.push({ contentBlockStop: { contentBlockIndex: index++ } });
  }
  events.push({ messageStop: { stopReason: turn.stopReason } }, { metadata: { usage, metrics: { latencyMs: 1 } } });
  return { headers: streamHeaders, chunks: eventFrames(events) };
}

function errorResponse(kind: ErrorKind): ReplayResponse {
  const error = (
    status: number,
    type: string,
    message: string,
    headers: Record<string, string> = {},
  ): ReplayResponse => ({
    status,
    headers: {
      "content-type": "application/json",
      "x-amzn-requestid": "7f2e1c9a-0000-4000-8000-000000000000",
      "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      ...headers,
    },
    body: JSON.stringify({ message }),
  });
  if (kind === "rate_limit")
    return error(429, "ThrottlingException", "Too many tokens, please wait before trying again.", {
      "retry-after": "0",
    });
  if (kind === "server") return error(503, "ServiceUnavailableException", "Bedrock is unable to process your request.");
  if (kind === "context_overflow") return error(400, "ValidationException", "Input is too long for requested model.");
  return error(400, "ValidationException", "The provided model identifier is invalid.");
}

type Block = {
  text?: string;
  toolUse?: { toolUseId: string; name: string; input: unknown };
  toolResult?: { toolUseId: string; content: { text?: string; json?: unknown }[]; status?: string };
  reasoningContent?: unknown;
};
type Body = {
  messages: { role: string; content: Block[] }[];
  toolConfig?: unknown;
  additionalModelRequestFields?: unknown;
};
const blocks = (body: unknown): Block[] => (body as Body).messages.flatMap((message) => message.content);

conformanceSuite({
  name: "bedrock",
  contentIn: bedrockParts,
  fetchesImageUrls: false,
  answeringModel: "anthropic.claude-test-v1:0",
  createModel: (origin, options) => bedrock({ model: "anthropic.claude-test-v1:0", baseURL: origin, ...options }),
  readStream: (open) => streamConverse(open),
  rawEvents: (payloads) => ({
    headers: streamHeaders,
    chunks: payloads.map((payload) =>
      frame(
        { ":event-type": "contentBlockDelta", ":content-type": "application/json", ":message-type": "event" },
        payload,
      ),
    ),
  }),
  turnResponse,
  errorResponse,
  toolResultsIn: (body) =>
    blocks(body).flatMap((block) =>
      block.toolResult === undefined
        ? []
        : [{ id: block.toolResult.toolUseId, output: block.toolResult.content[0]!.text! }],
    ),
  toolNamesIn: (body) =>
    ((body as { toolConfig?: { tools: { toolSpec?: { name: string } }[] } }).toolConfig?.tools ?? []).flatMap(
      (entry) => (entry.toolSpec === undefined ? [] : [entry.toolSpec.name]),
    ),
  toolCallsIn: (body) =>
    blocks(body).flatMap((block) =>
      block.toolUse === undefined ? [] : [{ id: block.toolUse.toolUseId, name: block.toolUse.name }],
    ),
});

type Cassette = {
  interactions: {
    request: { uri: string; body: string };
    response: {
      status: { code: number };
      headers: Record<string, string[]>;
      body?: { string: string | Uint8Array };
      parsed_body?: unknown;
    };
  }[];
};
const cassette = (name: string): Cassette => parseYaml(fixture(name)) as Cassette;

function split(bytes: Uint8Array, size: number): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.subarray(at, at + size));
  return pieces;
}

const secretTool = (recordedBody: string): ToolSchema => {
  const spec = (
    JSON.parse(recordedBody) as {
      toolConfig: {
        tools: { toolSpec: { name: string; description: string; inputSchema: { json: Record<string, never> } } }[];
      };
    }
  ).toolConfig.tools[0]!.toolSpec;
  return { name: spec.name, description: spec.description, input_schema: spec.inputSchema.json };
};
const secrets: Record<string, string> = { mellon: "Welcome to Moria!", radiance: "Life before Death" };
const userText = "Please retrieve the secrets associated with each of these passwords: mellon,radiance";

describe("bedrock: recorded responses", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });
  const model = (
    options: {
      stream?: boolean;
      model?: string;
      maxTokens?: number;
      thinking?: { budgetTokens: number };
      cache?: boolean;
    } = {},
  ) =>
    bedrock({
      model: "amazon.nova-micro-v1:0",
      baseURL: server.origin,
      apiKey: "bedrock-api-key-test-123456",
      ...options,
    });

  it("replays a recorded ConverseStream exchange (binary frames, split anywhere): two parallel calls, and both requests as recorded", async () => {
    const [first, second] = cassette(
      "mirascope__test_call_with_tools__bedrock_amazon_nova_micro_v1_0__stream.yaml",
    ).interactions;
    // 97-byte pieces cut frames, headers and payloads at arbitrary points.
    server.enqueue(
      { headers: streamHeaders, chunks: split(first!.response.body!.string as Uint8Array, 97) },
      { headers: streamHeaders, body: second!.response.body!.string },
    );
    const before = server.requests.length;
    const session = await agentLoop(
      model({ maxTokens: 4096 }),
      [secretTool(first!.request.body)],
      initSession("Use parallel tool calling.", userText),
      {
        toolHandlers: { secret_retrieval_tool: (input: { password: string }) => secrets[input.password]! },
      },
    );
    const turn = withoutTs(session).slice(2, 5);
    expect(turn[0]).toMatchObject({
      role: "assistant",
      content: expect.stringMatching(/^<thinking> To retrieve the secrets/),
    });
    expect(withoutAnswerer(turn.slice(1))).toStrictEqual([
      {
        type: "tool_call",
        id: "tooluse_jmYwyYtsQxiOee3FyiEBog",
        name: "secret_retrieval_tool",
        input: { password: "mellon" },
      },
      {
        type: "tool_call",
        id: "tooluse_wwdyV5DhQ4yhJbQiWcoZmw",
        name: "secret_retrieval_tool",
        input: { password: "radiance" },
        stopReason: "tool_use",
        usage: { inputTokens: 440, outputTokens: 102 },
      },
    ]);
    expect(session.messages.at(-1)).toMatchObject({
      role: "assistant",
      stopReason: "end_turn",
      usage: { inputTokens: 600, outputTokens: 103 },
    });
    expect(server.requests[before]!.url).toBe("/model/amazon.nova-micro-v1%3A0/converse-stream");
    expect(server.requests[before]!.body).toStrictEqual(JSON.parse(first!.request.body));
    expect(server.requests[before + 1]!.body).toStrictEqual(JSON.parse(second!.request.body));
  });

  it("replays the same exchange over Converse (not streamed): both requests as recorded", async () => {
    const [first, second] = cassette(
      "mirascope__test_call_with_tools__bedrock_amazon_nova_micro_v1_0__sync.yaml",
    ).interactions;
    server.enqueue({ body: first!.response.body!.string }, { body: second!.response.body!.string });
    const before = server.requests.length;
    const session = await agentLoop(
      model({ stream: false, maxTokens: 4096 }),
      [secretTool(first!.request.body)],
      initSession("Use parallel tool calling.", userText),
      {
        toolHandlers: { secret_retrieval_tool: (input: { password: string }) => secrets[input.password]! },
      },
    );
    expect(server.requests[before]!.url).toBe("/model/amazon.nova-micro-v1%3A0/converse");
    expect(server.requests[before]!.body).toStrictEqual(JSON.parse(first!.request.body));
    expect(server.requests[before + 1]!.body).toStrictEqual(JSON.parse(second!.request.body));
    expect(withoutAnswerer(withoutTs(session).slice(3, 5))).toStrictEqual([
      {
        type: "tool_call",
        id: "tooluse_nz0CoSg6TyuVDvWTCaatSw",
        name: "secret_retrieval_tool",
        input: { password: "mellon" },
      },
      {
        type: "tool_call",
        id: "tooluse_KBNwKhm1RwK4iTLuHbyOtg",
        name: "secret_retrieval_tool",
        input: { password: "radiance" },
        stopReason: "tool_use",
        usage: { inputTokens: 440, outputTokens: 93 },
      },
    ]);
    expect(session.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: expect.stringContaining("Life before Death"),
      stopReason: "end_turn",
    });
  });

  it("replays a two-turn reasoning exchange (Claude on Bedrock): the reasoning goes back signed, first, and the result pairs with its call", async () => {
    const [first, second] = cassette("pydantic-ai__test_bedrock_anthropic_tool_with_thinking.yaml").interactions;
    server.enqueue(
      { body: JSON.stringify(first!.response.parsed_body) },
      { body: JSON.stringify(second!.response.parsed_body) },
    );
    const before = server.requests.length;
    const getCountry: ToolSchema = {
      name: "get_user_country",
      description: "",
      input_schema: { additionalProperties: false, properties: {}, type: "object" },
    };
    const session = await agentLoop(
      // No cache points: the recorded requests had none.
      model({
        stream: false,
        model: "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
        thinking: { budgetTokens: 1024 },
        cache: false,
      }),
      [getCountry],
      initSession("", "What is the largest city in the user country?"),
      { toolHandlers: { get_user_country: () => "Mexico" } },
    );
    const recordedFirst = JSON.parse(first!.request.body) as Body;
    const recordedSecond = JSON.parse(second!.request.body) as Body;
    const sentFirst = server.requests[before]!.body as Body;
    const sentSecond = server.requests[before + 1]!.body as Body;
    expect(server.requests[before]!.url).toBe("/model/us.anthropic.claude-3-7-sonnet-20250219-v1%3A0/converse");
    expect(sentFirst.toolConfig).toStrictEqual(recordedFirst.toolConfig);
    expect(sentFirst.additionalModelRequestFields).toStrictEqual(recordedFirst.additionalModelRequestFields);
    expect(sentSecond.messages[1]).toStrictEqual(recordedSecond.messages[1]);
    const [result] = sentSecond.messages[2]!.content;
    expect(result).toStrictEqual({
      toolResult: { toolUseId: "tooluse_W9DaUFg4Tj2cRPpndqxWSg", content: [{ text: "Mexico" }] },
    });
    expect(recordedSecond.messages[2]!.content[0]).toMatchObject(result!);
    const thinking = session.messages[2] as Message & { signature: string };
    expect(thinking).toMatchObject({
      type: "thinking",
      provider: "bedrock",
      content: expect.stringMatching(/^The user is asking for the largest city/),
    });
    expect(thinking.signature).toMatch(/^ErcBCkgIBhAB/);
    expect(session.messages.at(-1)).toMatchObject({
      role: "assistant",
      stopReason: "end_turn",
      usage: { inputTokens: 539, outputTokens: 106 },
    });
  });

  it("streams reasoning text with its signature (decoded events, encoded as frames), then the answer", async () => {
    const events = chunksFile("vercel-ai__amazon-bedrock-reasoning.chunks.txt");
    server.enqueue({ headers: streamHeaders, chunks: eventFrames(events) });
    const deltas: string[] = [];
    const session = await agentLoop(
      model({ model: "us.anthropic.claude-3-7-sonnet-20250219-v1:0" }),
      [],
      initSession("s", "How many r's in strawberry?"),
      {
        onEvent: (event) => event.type === "thinking-delta" && deltas.push(event.delta),
      },
    );
    const reasoning = events.flatMap((event) => {
      const text = (event.contentBlockDelta as { delta?: { reasoningContent?: { text?: string } } } | undefined)?.delta
        ?.reasoningContent?.text;
      return text === undefined ? [] : [text];
    });
    expect(deltas.join("")).toBe(reasoning.join(""));
    expect(withoutAnswerer(withoutTs(session).slice(2))).toStrictEqual([
      {
        type: "thinking",
        content: reasoning.join(""),
        signature: expect.stringMatching(/^Ep0CCkgICxAB.*GAE=$/),
        provider: "bedrock",
      },
      {
        role: "assistant",
        content: 'There are **3** r\'s in "strawberry":\n\n1. st**r**awbe**r****r**y',
        stopReason: "end_turn",
        usage: { inputTokens: 51, outputTokens: 94 },
      },
    ]);
  });

  it("Kimi K2 on Bedrock: skips empty text blocks, keeps unsigned reasoning, and sends its id `functions.glob_search:0` back normalized on both sides", async () => {
    server.enqueue(
      {
        headers: streamHeaders,
        chunks: eventFrames(chunksFile("vercel-ai__issue-11409-kimi-k2-thinking-glob-search.chunks.txt")),
      },
      turnResponse(
        { text: "FOUND ISSUE_11409_CONTENT", stopReason: "end_turn", usage: { input: 300, output: 5 } },
        true,
      ),
    );
    const before = server.requests.length;
    const globSearch: ToolSchema = {
      name: "glob_search",
      description: "Find files.",
      input_schema: { type: "object", properties: { pattern: { type: "string" } } },
    };
    const session = await agentLoop(
      model({ model: "moonshot.kimi-k2-thinking" }),
      [globSearch],
      initSession("s", "find the cursor file"),
      {
        toolHandlers: { glob_search: () => "FILE1" },
      },
    );
    expect(withoutAnswerer(withoutTs(session).slice(2, 4))).toStrictEqual([
      {
        type: "thinking",
        content: expect.stringContaining("Call glob_search with pattern **/*cursor*"),
        provider: "bedrock",
      },
      {
        type: "tool_call",
        id: "functions.glob_search:0",
        name: "glob_search",
        input: { pattern: "**/*cursor*" },
        stopReason: "tool_use",
        usage: { inputTokens: 217, outputTokens: 75 },
      },
    ]);
    const sent = server.requests[before + 1]!.body as Body;
    // Unsigned reasoning cannot be verified, so it is not sent back; the call and its result keep one id.
    expect(sent.messages[1]!.content).toHaveLength(1);
    const id = sent.messages[1]!.content[0]!.toolUse!.toolUseId;
    expect(id).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(sent.messages[2]!.content).toStrictEqual([{ toolResult: { toolUseId: id, content: [{ text: "FILE1" }] } }]);
  });

  it("turns a recorded HTTP 400 (an invalid model) into a non-retryable ProviderError with Bedrock's message", async () => {
    const [interaction] = cassette("pydantic-ai__test_bedrock_streaming_error.yaml").interactions;
    server.enqueue({
      status: interaction!.response.status.code,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(interaction!.response.parsed_body),
    });
    const error = (await agentLoop(
      model({ model: "us.does-not-exist-model-v1:0" }),
      [],
      initSession("", "hello"),
    ).catch((thrown: unknown) => thrown)) as ProviderError;
    expect(isProviderError(error)).toBe(true);
    expect(error).toMatchObject({
      provider: "bedrock",
      status: 400,
      retryable: false,
      message: "bedrock: The provided model identifier is invalid.",
    });
  });

  it("reads the error type from x-amzn-errortype, and the request id", async () => {
    server.enqueue(errorResponse("invalid_request"));
    const error = (await agentLoop(model(), [], initSession("s", "u")).catch(
      (thrown: unknown) => thrown,
    )) as ProviderError;
    expect(error).toMatchObject({
      status: 400,
      retryable: false,
      code: "ValidationException",
      requestId: "7f2e1c9a-0000-4000-8000-000000000000",
    });
  });

  it("parses a non-streaming response on its own (fromBedrockResponse)", () => {
    const [first] = cassette("pydantic-ai__test_bedrock_anthropic_tool_with_thinking.yaml").interactions;
    const messages = fromBedrockResponse(first!.response.parsed_body as BedrockResponse);
    expect(messages.map((message) => ("role" in message ? message.role : message.type))).toStrictEqual([
      "thinking",
      "assistant",
      "tool_call",
    ]);
    expect(messages[2]).toMatchObject({
      id: "tooluse_W9DaUFg4Tj2cRPpndqxWSg",
      input: {},
      stopReason: "tool_use",
      usage: { inputTokens: 397, outputTokens: 130 },
    });
  });
});

describe("bedrock: stream events and errors", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });
  const model = () =>
    bedrock({ model: "anthropic.claude-test-v1:0", baseURL: server.origin, apiKey: "bedrock-api-key-test-123456" });
  const fine = () => turnResponse({ text: "fine", stopReason: "end_turn", usage: { input: 1, output: 1 } }, true);
  const started = eventFrames([
    { messageStart: { role: "assistant" } },
    { contentBlockDelta: { contentBlockIndex: 0, delta: { text: "Half" } } },
  ]);

  it("a throttlingException frame is retryable and retried, even worded like an overflow", async () => {
    server.enqueue(
      {
        headers: streamHeaders,
        chunks: [
          ...started,
          exceptionFrame("throttlingException", "Too many tokens, please wait before trying again."),
        ],
      },
      fine(),
    );
    const retried: string[] = [];
    const session = await agentLoop(model(), [], initSession("s", "u"), {
      retry: { initialDelayMs: 1 },
      onEvent: (event) => event.type === "retry" && retried.push(event.error),
    });
    expect(retried).toStrictEqual(["bedrock: Too many tokens, please wait before trying again."]);
    expect(session.messages.at(-1)).toMatchObject({ content: "fine" });
  });

  it("a validationException frame is not retryable; one saying the input is too long is a ContextOverflowError", async () => {
    server.enqueue({
      headers: streamHeaders,
      chunks: [
        ...started,
        exceptionFrame("validationException", "Malformed input request, please reformat your input and try again."),
      ],
    });
    const invalid = await agentLoop(model(), [], initSession("s", "u")).catch((thrown: unknown) => thrown);
    expect(invalid).toMatchObject({ name: "ProviderError", retryable: false, code: "ValidationException" });
    server.enqueue({
      headers: streamHeaders,
      chunks: [...started, exceptionFrame("validationException", "Input is too long for requested model.")],
    });
    expect(
      isContextOverflowError(await agentLoop(model(), [], initSession("s", "u")).catch((thrown: unknown) => thrown)),
    ).toBe(true);
  });

  it("recognises Bedrock's own overflow phrasings that the shared patterns miss", async () => {
    server.enqueue({
      status: 400,
      headers: { "content-type": "application/json", "x-amzn-errortype": "ValidationException" },
      body: JSON.stringify({
        message:
          "The model returned the following errors: input length and `max_tokens` exceed context limit: 142422 + 64000 > 204658",
      }),
    });
    const error = await agentLoop(model(), [], initSession("s", "u")).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({
      name: "ContextOverflowError",
      status: 400,
      retryable: false,
      code: "ValidationException",
    });
  });

  it("a frame with a bad checksum breaks the stream: retryable, and the call is repeated", async () => {
    const damaged = turnResponse(
      { text: "Damaged on the way", stopReason: "end_turn", usage: { input: 1, output: 1 } },
      true,
    );
    const chunks = damaged.chunks!.map((chunk) => new Uint8Array(chunk as Uint8Array));
    const payload = chunks[1]!;
    payload[payload.length - 10] = payload[payload.length - 10]! ^ 0xff;
    server.enqueue({ headers: streamHeaders, chunks }, fine());
    const retried: string[] = [];
    const session = await agentLoop(model(), [], initSession("s", "u"), {
      retry: { initialDelayMs: 1 },
      onEvent: (event) => event.type === "retry" && retried.push(event.error),
    });
    expect(retried).toStrictEqual([expect.stringContaining("checksum mismatch")]);
    expect(session.messages.at(-1)).toMatchObject({ content: "fine" });
  });

  it("never runs a tool call whose JSON did not arrive whole: retryable, unless the turn stopped at max_tokens (then input {})", async () => {
    const cut = (stopReason: string) => ({
      headers: streamHeaders,
      chunks: eventFrames([
        { messageStart: { role: "assistant" } },
        {
          contentBlockStart: { contentBlockIndex: 0, start: { toolUse: { toolUseId: "tooluse_cut", name: "lookup" } } },
        },
        { contentBlockDelta: { contentBlockIndex: 0, delta: { toolUse: { input: '{"word": "alp' } } } },
        { contentBlockStop: { contentBlockIndex: 0 } },
        { messageStop: { stopReason } },
        { metadata: { usage: { inputTokens: 3, outputTokens: 9 } } },
      ]),
    });
    let ran = false;
    const lookup: ToolSchema = { name: "lookup", description: "Look a word up.", input_schema: { type: "object" } };
    server.enqueue(cut("tool_use"));
    const error = await agentLoop(model(), [lookup], initSession("s", "u"), {
      retry: false,
      toolHandlers: { lookup: () => (ran = true) },
    }).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({
      name: "ProviderError",
      retryable: true,
      message: 'bedrock: tool call "lookup" arrived with invalid JSON input',
    });
    server.enqueue(cut("max_tokens"));
    // Eager starts off: with them on, the loop may start a call before the turn's stop reason arrives.
    const session = await agentLoop(model(), [lookup], initSession("s", "u"), {
      eagerTools: false,
      toolHandlers: { lookup: () => (ran = true) },
    });
    expect(withoutAnswerer(withoutTs(session)[2])).toStrictEqual({
      type: "tool_call",
      id: "tooluse_cut",
      name: "lookup",
      input: {},
      stopReason: "max_tokens",
      usage: { inputTokens: 3, outputTokens: 9 },
    });
    expect(ran).toBe(false);
  });

  it("maps stop reasons: guardrails and content filters to content_filter, end_turn with tool calls to tool_use; adds cached tokens to the input", () => {
    const response = (stopReason: string, content: unknown[]): BedrockResponse =>
      ({
        output: { message: { role: "assistant", content } },
        stopReason,
        usage: { inputTokens: 10, outputTokens: 2, cacheReadInputTokens: 100, cacheWriteInputTokens: 5 },
      }) as BedrockResponse;
    expect(fromBedrockResponse(response("guardrail_intervened", [{ text: "Sorry." }]))).toStrictEqual([
      {
        role: "assistant",
        content: "Sorry.",
        stopReason: "content_filter",
        rawStopReason: "guardrail_intervened",
        usage: { inputTokens: 115, outputTokens: 2, cacheReadTokens: 100, cacheWriteTokens: 5 },
      },
    ]);
    expect(fromBedrockResponse(response("content_filtered", []))[0]).toMatchObject({
      content: "",
      stopReason: "content_filter",
      rawStopReason: "content_filtered",
    });
    expect(
      fromBedrockResponse(response("end_turn", [{ toolUse: { toolUseId: "t1", name: "x", input: {} } }]))[0],
    ).toMatchObject({ stopReason: "tool_use", rawStopReason: "end_turn" });
    expect(fromBedrockResponse(response("malformed_tool_use", []))[0]).toMatchObject({
      stopReason: "other",
      rawStopReason: "malformed_tool_use",
    });
  });

  it("keeps redacted reasoning as a redacted thinking message, its data joined as bytes", async () => {
    server.enqueue({
      headers: streamHeaders,
      chunks: eventFrames([
        { messageStart: { role: "assistant" } },
        {
          contentBlockDelta: {
            contentBlockIndex: 0,
            delta: { reasoningContent: { redactedContent: Buffer.from("secret ").toString("base64") } },
          },
        },
        {
          contentBlockDelta: {
            contentBlockIndex: 0,
            delta: { reasoningContent: { redactedContent: Buffer.from("thoughts").toString("base64") } },
          },
        },
        { contentBlockStop: { contentBlockIndex: 0 } },
        { contentBlockDelta: { contentBlockIndex: 1, delta: { text: "Done." } } },
        { messageStop: { stopReason: "end_turn" } },
      ]),
    });
    const session = await agentLoop(model(), [], initSession("s", "u"));
    expect(withoutAnswerer(withoutTs(session).slice(2))).toStrictEqual([
      {
        type: "thinking",
        content: "",
        signature: Buffer.from("secret thoughts").toString("base64"),
        redacted: true,
        provider: "bedrock",
      },
      // No contentBlockStop for the text and no metadata: the turn still ends at messageStop, without usage.
      { role: "assistant", content: "Done.", stopReason: "end_turn" },
    ]);
  });
});

describe("bedrock: credentials, region and signing", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });
  const clearAwsEnv = (): void => {
    for (const name of [
      "AWS_BEARER_TOKEN_BEDROCK",
      "AWS_ACCESS_KEY_ID",
      "AWS_SECRET_ACCESS_KEY",
      "AWS_SESSION_TOKEN",
      "AWS_REGION",
      "AWS_DEFAULT_REGION",
      "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
    ]) {
      vi.stubEnv(name, "");
    }
  };
  const hi = () => turnResponse({ text: "hi", stopReason: "end_turn", usage: { input: 1, output: 1 } }, true);
  const keys = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };

  it("signs the AWS documentation's example request (IAM ListUsers) to its published signature", async () => {
    const headers = await signRequest({
      method: "GET",
      url: "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08",
      headers: { "Content-Type": "application/x-www-form-urlencoded; charset=utf-8" },
      body: "",
      region: "us-east-1",
      service: "iam",
      credentials: keys,
      date: new Date("2015-08-30T12:36:00Z"),
    });
    expect(headers).toStrictEqual({
      "content-type": "application/x-www-form-urlencoded; charset=utf-8",
      "x-amz-date": "20150830T123600Z",
      authorization:
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, " +
        "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
    });
  });

  // Expected signatures computed with botocore 1.43's SigV4Auth for the same request, time and keys.
  it("signs a Converse request as botocore does: the model id's %3A signed as %253A; a session token is sent and signed", async () => {
    const request = {
      method: "POST",
      url: "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-3-7-sonnet-20250219-v1%3A0/converse",
      headers: { "content-type": "application/json" },
      body: '{"messages":[{"role":"user","content":[{"text":"hi"}]}]}',
      region: "us-east-1",
      service: "bedrock",
      credentials: keys,
      date: new Date("2015-08-30T12:36:00Z"),
    };
    expect((await signRequest(request)).authorization).toBe(
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date, " +
        "Signature=01d9241da23c82140aa82ec58af08b7a43298b1648763e57331830b848a1871d",
    );
    const withToken = await signRequest({
      ...request,
      url: request.url.replace(/converse$/, "converse-stream"),
      credentials: { ...keys, sessionToken: "FQoGZXIvYXdzEXAMPLETOKEN" },
    });
    expect(withToken).toMatchObject({
      "x-amz-security-token": "FQoGZXIvYXdzEXAMPLETOKEN",
      authorization:
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, " +
        "Signature=3545d8cbd262678d96058d7a97376a7f6fe28011d43c04a6b35297d44e60c331",
    });
  });

  it("signs with keys from the environment, exactly the bytes it sends", async () => {
    clearAwsEnv();
    vi.stubEnv("AWS_ACCESS_KEY_ID", keys.accessKeyId);
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", keys.secretAccessKey);
    vi.stubEnv("AWS_SESSION_TOKEN", "session-token-from-env");
    vi.stubEnv("AWS_REGION", "eu-west-3");
    server.enqueue(hi());
    const before = server.requests.length;
    await agentLoop(
      bedrock({ model: "mistral.mistral-large-2407-v1:0", baseURL: server.origin }),
      [],
      initSession("s", "u"),
    );
    const request = server.requests[before]!;
    const date = request.headers["x-amz-date"] as string;
    expect(date).toMatch(/^\d{8}T\d{6}Z$/);
    expect(request.headers["x-amz-security-token"]).toBe("session-token-from-env");
    const expected = await signRequest({
      method: "POST",
      url: `${server.origin}${request.url}`,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(request.body),
      region: "eu-west-3",
      service: "bedrock",
      credentials: { ...keys, sessionToken: "session-token-from-env" },
      date: new Date(date.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z")),
    });
    expect(request.headers.authorization).toBe(expected.authorization);
    expect(request.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-3\/bedrock\/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature=[0-9a-f]{64}$/,
    );
  });

  it("never sends a signed request (its session token) to another origin; a same-origin 307 is signed again for its new path", async () => {
    clearAwsEnv();
    const credentials = { ...keys, sessionToken: "session-token-never-elsewhere" };
    const elsewhere = await startReplayServer();
    try {
      elsewhere.enqueue(hi());
      server.enqueue({ status: 307, headers: { location: `${elsewhere.origin}/model/m/converse-stream` } });
      const error = await agentLoop(
        bedrock({ model: "m", region: "us-east-1", baseURL: server.origin, credentials }),
        [],
        initSession("s", "u"),
        { retry: false },
      ).catch((thrown: unknown) => thrown);
      expect(error).toMatchObject({ name: "ProviderError", status: 307, retryable: false });
      expect(elsewhere.requests).toStrictEqual([]);
    } finally {
      await elsewhere.close();
    }
    server.enqueue({ status: 307, headers: { location: "/v2/model/m/converse-stream" } }, hi());
    const before = server.requests.length;
    await agentLoop(
      bedrock({ model: "m", region: "us-east-1", baseURL: server.origin, credentials }),
      [],
      initSession("s", "u"),
    );
    const moved = server.requests[before + 1]!;
    expect(moved.url).toBe("/v2/model/m/converse-stream");
    const expected = await signRequest({
      method: "POST",
      url: `${server.origin}${moved.url}`,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(moved.body),
      region: "us-east-1",
      service: "bedrock",
      credentials,
      date: new Date(
        (moved.headers["x-amz-date"] as string).replace(
          /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/,
          "$1-$2-$3T$4:$5:$6Z",
        ),
      ),
    });
    expect(moved.headers.authorization).toBe(expected.authorization);
  });

  it("calls a credentials function for every request; a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) is sent as a bearer token instead", async () => {
    clearAwsEnv();
    let calls = 0;
    const credentials = async () => {
      calls++;
      return { accessKeyId: `AKIDROTATED${calls}`, secretAccessKey: "secret-rotated-0123456789" };
    };
    server.enqueue(hi(), hi());
    const before = server.requests.length;
    const signed = bedrock({ model: "m", region: "us-east-2", baseURL: server.origin, credentials });
    await agentLoop(signed, [], initSession("s", "u"));
    await agentLoop(signed, [], initSession("s", "u"));
    expect(calls).toBe(2);
    expect(server.requests[before + 1]!.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDROTATED2\/\d{8}\/us-east-2\/bedrock\//,
    );

    vi.stubEnv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-from-env");
    vi.stubEnv("AWS_ACCESS_KEY_ID", "AKIDIGNORED");
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", "ignored-secret-0123456789");
    server.enqueue(hi());
    await agentLoop(bedrock({ model: "m", baseURL: server.origin }), [], initSession("s", "u"));
    expect(server.requests.at(-1)!.headers.authorization).toBe("Bearer bedrock-api-key-from-env");
    expect(server.requests.at(-1)!.headers["x-amz-date"]).toBeUndefined();
  });

  it("says which variables to set when there are no credentials or no region", async () => {
    clearAwsEnv();
    await expect(agentLoop(bedrock({ model: "m", baseURL: server.origin }), [], initSession("s", "u"))).rejects.toThrow(
      "set AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
    );
    await expect(
      agentLoop(bedrock({ model: "m", apiKey: "bedrock-api-key-test-123456" }), [], initSession("s", "u")),
    ).rejects.toThrow("set AWS_REGION");
  });

  it("builds the regional endpoint from AWS_DEFAULT_REGION and never puts a secret in an error", async () => {
    clearAwsEnv();
    vi.stubEnv("AWS_DEFAULT_REGION", "ap-southeast-2");
    let seenUrl = "";
    const fetch = async (url: string): Promise<Response> => {
      seenUrl = url;
      return new Response(
        JSON.stringify({
          message: "The security token included in the request is invalid: wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        }),
        {
          status: 403,
          headers: {
            "x-amzn-errortype":
              "UnrecognizedClientException:http://internal.amazon.com/coral/com.amazon.coral.service/",
          },
        },
      );
    };
    const error = (await agentLoop(
      bedrock({ model: "amazon.nova-pro-v1:0", credentials: keys, fetch }),
      [],
      initSession("s", "u"),
    ).catch((thrown: unknown) => thrown)) as ProviderError;
    expect(seenUrl).toBe(
      "https://bedrock-runtime.ap-southeast-2.amazonaws.com/model/amazon.nova-pro-v1%3A0/converse-stream",
    );
    expect(error).toMatchObject({ status: 403, retryable: false, code: "UnrecognizedClientException" });
    expect(error.message).not.toContain(keys.secretAccessKey);
  });
});

describe("bedrock: conversion rules", () => {
  const convert = (session: Session, tools: ToolSchema[] = []) => toBedrockRequest(session, tools);
  const turn = (...messages: Message[]): Session => {
    const session = initSession("s", "u");
    for (const message of messages) extendSession(session, message);
    return session;
  };

  it("system messages become `system: [{text}]`", () => {
    const session = initSession("You are precise.", "Do it");
    extendSession(session, { role: "system", content: "Answer in French." });
    expect(convert(session).system).toStrictEqual([{ text: "You are precise." }, { text: "Answer in French." }]);
    expect(convert(session).messages).toStrictEqual([{ role: "user", content: [{ text: "Do it" }] }]);
  });

  it("strictly alternates user and assistant: consecutive same-role messages merge, blank text is left out", () => {
    const session = turn(
      { role: "user", content: "and also this" },
      { role: "assistant", content: "First." },
      { role: "assistant", content: "   " },
      { role: "assistant", content: "", stopReason: "aborted" },
      { role: "assistant", content: "Second." },
      { role: "user", content: "ok" },
    );
    expect(convert(session).messages).toStrictEqual([
      { role: "user", content: [{ text: "u" }, { text: "and also this" }] },
      { role: "assistant", content: [{ text: "First." }, { text: "Second." }] },
      { role: "user", content: [{ text: "ok" }] },
    ]);
  });

  it("puts a turn's tool results in ONE user message, in call order, before its text, never more results than uses", () => {
    const session = turn(
      { type: "tool_call", id: "a", name: "t", input: {} },
      { type: "tool_call", id: "b", name: "t", input: {} },
      { type: "tool_result", id: "b", output: "B" },
      { type: "tool_result", id: "a", output: "A" },
      { type: "tool_result", id: "a", output: "A again" },
      { role: "user", content: "next" },
      { role: "assistant", content: "done" },
      // A result of an earlier turn's call, far from it: Bedrock would refuse it here.
      { type: "tool_result", id: "b", output: "late" },
      { role: "user", content: "bye" },
    );
    const { messages } = convert(session, [{ name: "t", description: "d", input_schema: { type: "object" } }]);
    expect(messages.slice(1)).toStrictEqual([
      {
        role: "assistant",
        content: [
          { toolUse: { toolUseId: "a", name: "t", input: {} } },
          { toolUse: { toolUseId: "b", name: "t", input: {} } },
        ],
      },
      {
        role: "user",
        content: [
          { toolResult: { toolUseId: "a", content: [{ text: "A" }] } },
          { toolResult: { toolUseId: "b", content: [{ text: "B" }] } },
          { text: "next" },
        ],
      },
      { role: "assistant", content: [{ text: "done" }] },
      { role: "user", content: [{ text: "bye" }] },
    ]);
  });

  it("answers an unanswered tool use with an error result", () => {
    const session = turn(
      { type: "tool_call", id: "lost", name: "t", input: {} },
      { role: "user", content: "continue" },
    );
    expect(convert(session).messages.at(-1)).toStrictEqual({
      role: "user",
      content: [
        {
          toolResult: {
            toolUseId: "lost",
            content: [{ text: "Error: no result was recorded for this tool call." }],
            status: "error",
          },
        },
        { text: "continue" },
      ],
    });
  });

  it("sends toolUse.input as an object, whatever the session holds", () => {
    const session = turn(
      { type: "tool_call", id: "x", name: "t", input: ["not", "an", "object"] as never },
      { type: "tool_call", id: "y", name: "t", input: null as never },
      { type: "tool_result", id: "x", output: "1" },
      { type: "tool_result", id: "y", output: "2" },
    );
    expect(
      convert(session).messages[1]!.content.map((block) => (block.toolUse as { input: unknown }).input),
    ).toStrictEqual([{}, {}]);
  });

  it("tool results: strings as [{text}], objects as [{json}], other JSON as text, blank output as a placeholder, errors with status error", () => {
    const outputs: { output: JsonValue; isError?: boolean }[] = [
      { output: "plain", isError: false },
      { output: { rows: 2 } },
      { output: [1, 2] },
      { output: "" },
      { output: "Error: boom", isError: true },
    ];
    const session = turn(
      ...outputs.map((_, index) => ({ type: "tool_call" as const, id: `c${index}`, name: "t", input: {} })),
      ...outputs.map((result, index) => ({ type: "tool_result" as const, id: `c${index}`, ...result })),
    );
    expect(convert(session).messages[2]!.content.map((block) => block.toolResult)).toStrictEqual([
      { toolUseId: "c0", content: [{ text: "plain" }] },
      { toolUseId: "c1", content: [{ json: { rows: 2 } }] },
      { toolUseId: "c2", content: [{ text: "[1,2]" }] },
      { toolUseId: "c3", content: [{ text: "(no output)" }] },
      { toolUseId: "c4", content: [{ text: "Error: boom" }], status: "error" },
    ]);
  });

  it("normalizes tool-use ids with safeToolId(id, 64), the same on the use and its result", () => {
    const long = `call_${"x".repeat(80)}`;
    const session = turn(
      { type: "tool_call", id: "functions.glob_search:0", name: "glob_search", input: {} },
      { type: "tool_call", id: long, name: "glob_search", input: {} },
      { type: "tool_result", id: "functions.glob_search:0", output: "r1" },
      { type: "tool_result", id: long, output: "r2" },
    );
    const [, assistant, user] = convert(session).messages;
    const useIds = assistant!.content.map((block) => (block.toolUse as { toolUseId: string }).toolUseId);
    const resultIds = user!.content.map((block) => (block.toolResult as { toolUseId: string }).toolUseId);
    expect(resultIds).toStrictEqual(useIds);
    for (const id of useIds) expect(id).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(new Set(useIds).size).toBe(2);
  });

  it("sends back only Bedrock's own signed reasoning, first in its message, and redacted reasoning as redactedContent", () => {
    const session = turn(
      { role: "assistant", content: "Answer." },
      { type: "thinking", content: "mine", signature: "sig-bedrock", provider: "bedrock" },
      { type: "thinking", content: "", signature: "b3BhcXVl", provider: "bedrock", redacted: true },
      { type: "thinking", content: "from the Anthropic API", signature: "sig-anthropic", provider: "anthropic" },
      { type: "thinking", content: "untagged", signature: "sig-untagged" },
      { type: "thinking", content: "no signature", provider: "bedrock" },
      { type: "thinking", content: "cut…", signature: "sig-cut", provider: "bedrock", compacted: true },
    );
    expect(convert(session).messages[1]!.content).toStrictEqual([
      { reasoningContent: { reasoningText: { text: "mine", signature: "sig-bedrock" } } },
      { reasoningContent: { redactedContent: "b3BhcXVl" } },
      { text: "Answer." },
    ]);
  });

  it("declares the tools a history used when the request has none (Bedrock refuses tool blocks without a toolConfig)", () => {
    const session = turn(
      { type: "tool_call", id: "a", name: "search", input: {} },
      { type: "tool_result", id: "a", output: "r" },
    );
    expect(convert(session).toolConfig).toStrictEqual({
      tools: [
        {
          toolSpec: {
            name: "search",
            description: "Used earlier in this conversation; not available now.",
            inputSchema: { json: { type: "object" } },
          },
        },
      ],
    });
    expect(convert(initSession("s", "u")).toolConfig).toBeUndefined();
  });

  it("converts a session recorded with another provider without error", () => {
    const session = turn(
      { type: "thinking", content: "openai reasoning", signature: "gAAAAB-encrypted", provider: "openai-responses" },
      { type: "thinking", content: "anthropic thinking", signature: "EqQBCkgIBxAB", provider: "anthropic" },
      { type: "tool_call", id: "call_abc|fc_123", name: "t", input: { q: 1 } },
      { type: "tool_result", id: "call_abc|fc_123", output: { ok: true } },
      { role: "assistant", content: "Done." },
    );
    const { messages } = convert(session, [{ name: "t", description: "d", input_schema: { type: "object" } }]);
    const id = (messages[1]!.content[0]!.toolUse as { toolUseId: string }).toolUseId;
    expect(messages.slice(1)).toStrictEqual([
      { role: "assistant", content: [{ toolUse: { toolUseId: id, name: "t", input: { q: 1 } } }] },
      { role: "user", content: [{ toolResult: { toolUseId: id, content: [{ json: { ok: true } }] } }] },
      { role: "assistant", content: [{ text: "Done." }] },
    ]);
  });

  it("a request with every message kind, thinking, inference settings and cache points", () => {
    const session = initSession("You are careful.", "Plan, then act.");
    extendSession(session, { type: "thinking", content: "Let me look.", signature: "sig-1", provider: "bedrock" });
    extendSession(session, { role: "assistant", content: "Looking it up." });
    extendSession(session, { type: "tool_call", id: "tooluse_1", name: "lookup", input: { word: "alpha" } });
    extendSession(session, { type: "tool_call", id: "tooluse_2", name: "lookup", input: { word: "beta" } });
    extendSession(session, { type: "tool_result", id: "tooluse_1", output: "first letter" });
    extendSession(session, { type: "tool_result", id: "tooluse_2", output: "no such word", isError: true });
    extendSession(session, {
      type: "thinking",
      content: "",
      signature: "cmVkYWN0ZWQ=",
      provider: "bedrock",
      redacted: true,
    });
    extendSession(session, { role: "assistant", content: "Alpha is the first letter." });
    extendSession(session, { role: "user", content: "Thanks." });
    const tools: ToolSchema[] = [
      {
        name: "lookup",
        description: "Look a word up.",
        input_schema: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
      },
    ];
    expect(
      toBedrockRequest(session, tools, {
        maxTokens: 4096,
        temperature: 1,
        thinking: { budgetTokens: 2048 },
        cache: true,
        additionalModelRequestFields: { anthropic_beta: ["interleaved-thinking-2025-05-14"] },
      }),
    ).toMatchSnapshot();
  });
});

// Opt-in: runs only with real AWS credentials (a Bedrock API key or access keys), never in CI.
liveAgentSuite("bedrock", (process.env.AWS_BEARER_TOKEN_BEDROCK ?? process.env.AWS_ACCESS_KEY_ID) !== undefined, () =>
  bedrock({
    model: process.env.BEDROCK_MODEL ?? "us.anthropic.claude-haiku-4-5-20251001-v1:0",
    region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? "us-east-1",
    maxTokens: 1024,
  }),
);
