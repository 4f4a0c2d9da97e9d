import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentLoop,
  initSession,
  isContextOverflowError,
  isProviderError,
  response,
  type InvokeModel,
  type JsonObject,
  type ProviderError,
  type ToolSchema,
} from "simple-agent-loop";
import { expectEveryCallAnsweredOnce, withoutTs } from "../helpers.ts";
import { startReplayServer, type ReplayResponse, type ReplayServer } from "./replay-server.ts";

/** A model turn, to be encoded in each provider's own wire format. */
export type WireTurn = {
  text?: string;
  toolCalls?: { id: string; name: string; input: JsonObject }[];
  stopReason: "end_turn" | "tool_use" | "max_tokens";
  usage: { input: number; output: number };
};

export type ErrorKind = "rate_limit" | "server" | "invalid_request" | "context_overflow";

/** What the shared suite needs to know about one adapter. */
export type ConformanceTarget = {
  name: string;
  createModel: (origin: string, options: { stream: boolean; apiKey: string }) => InvokeModel;
  /** The provider's response to a turn: a JSON body, or SSE chunks when `stream`. */
  turnResponse: (turn: WireTurn, stream: boolean) => ReplayResponse;
  /** A provider error response; `rate_limit` must carry a retry-after of 0 seconds. */
  errorResponse: (kind: ErrorKind) => ReplayResponse;
  /** The tool results a recorded request body sends back, in order, read from the provider's format. */
  toolResultsIn: (body: unknown) => { id: string; output: string }[];
  /** The tool calls a recorded request body replays, in order. */
  toolCallsIn: (body: unknown) => { id: string; name: string }[];
};

const apiKey = "sk-test-conformance-0123456789";

const lookup: ToolSchema = {
  name: "lookup",
  description: "Look a word up.",
  input_schema: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
};

/**
 * The behaviour every adapter must have, against a local server speaking the provider's wire
 * format: streamed and not, tool round trips, errors and retries, cut streams, abort.
 */
export function conformanceSuite(target: ConformanceTarget): void {
  describe(`${target.name}: conformance`, () => {
    let server: ReplayServer;
    beforeAll(async () => {
      server = await startReplayServer();
    });
    afterAll(async () => {
      await server.close();
    });
    const fresh = (): void => {
      server.requests.length = 0;
    };

    for (const stream of [true, false]) {
      const mode = stream ? "streamed" : "not streamed";

      it(`answers with text, stop reason and usage (${mode})`, async () => {
        fresh();
        server.enqueue(target.turnResponse({ text: "Hello there!", stopReason: "end_turn", usage: { input: 12, output: 3 } }, stream));
        const session = await agentLoop(target.createModel(server.origin, { stream, apiKey }), [], initSession("Be brief.", "Say hello"));
        expect(withoutTs(session).slice(2)).toStrictEqual([
          { role: "assistant", content: "Hello there!", stopReason: "end_turn", usage: expect.objectContaining({ inputTokens: 12, outputTokens: 3 }) },
        ]);
        expect(server.requests).toHaveLength(1);
      });

      it(`runs parallel tool calls and sends every result back, paired by id, in call order (${mode})`, async () => {
        fresh();
        server.enqueue(
          target.turnResponse(
            {
              text: "Looking both up.",
              toolCalls: [
                { id: "call_alpha", name: "lookup", input: { word: "alpha" } },
                { id: "call_beta", name: "lookup", input: { word: "beta" } },
              ],
              stopReason: "tool_use",
              usage: { input: 20, output: 10 },
            },
            stream,
          ),
          target.turnResponse({ text: "Both found.", stopReason: "end_turn", usage: { input: 40, output: 4 } }, stream),
        );
        const looked: string[] = [];
        const session = await agentLoop(target.createModel(server.origin, { stream, apiKey }), [lookup], initSession("s", "look up alpha and beta"), {
          toolHandlers: {
            lookup: async (input: { word: string }) => {
              looked.push(input.word);
              await new Promise((resolve) => setTimeout(resolve, input.word === "alpha" ? 20 : 0));
              return `definition of ${input.word}`;
            },
          },
        });
        expect(looked.sort()).toStrictEqual(["alpha", "beta"]);
        expect(response(session)?.content).toBe("Both found.");
        expectEveryCallAnsweredOnce(session);
        const second = server.requests[1]!.body;
        const calls = target.toolCallsIn(second);
        expect(calls.map((call) => call.name)).toStrictEqual(["lookup", "lookup"]);
        expect(target.toolResultsIn(second)).toStrictEqual([
          { id: calls[0]!.id, output: "definition of alpha" },
          { id: calls[1]!.id, output: "definition of beta" },
        ]);
      });

      it(`retries a rate limit, honouring retry-after (${mode})`, async () => {
        fresh();
        server.enqueue(target.errorResponse("rate_limit"), target.turnResponse({ text: "ok", stopReason: "end_turn", usage: { input: 1, output: 1 } }, stream));
        const retries: number[] = [];
        const session = await agentLoop(target.createModel(server.origin, { stream, apiKey }), [], initSession("s", "u"), {
          onEvent: (event) => {
            if (event.type === "retry") retries.push(event.delayMs);
          },
        });
        expect(response(session)?.content).toBe("ok");
        expect(retries).toStrictEqual([0]);
        expect(server.requests).toHaveLength(2);
      });

      it(`retries a server error (${mode})`, async () => {
        fresh();
        server.enqueue(target.errorResponse("server"), target.turnResponse({ text: "ok", stopReason: "end_turn", usage: { input: 1, output: 1 } }, stream));
        const session = await agentLoop(target.createModel(server.origin, { stream, apiKey }), [], initSession("s", "u"), {
          retry: { initialDelayMs: 1 },
        });
        expect(response(session)?.content).toBe("ok");
      });
    }

    it("throws a typed, non-retryable error for an invalid request, without the API key, adding nothing", async () => {
      fresh();
      server.enqueue(target.errorResponse("invalid_request"));
      const session = initSession("s", "u");
      const error = (await agentLoop(target.createModel(server.origin, { stream: true, apiKey }), [], session).catch((thrown: unknown) => thrown)) as ProviderError;
      expect(isProviderError(error)).toBe(true);
      expect(error).toMatchObject({ provider: target.name, status: 400, retryable: false });
      expect(error.message).not.toContain(apiKey);
      expect(JSON.stringify(error)).not.toContain(apiKey);
      expect(session.messages).toHaveLength(2);
      expect(server.requests).toHaveLength(1);
    });

    it("recognises a context overflow", async () => {
      fresh();
      server.enqueue(target.errorResponse("context_overflow"));
      const error = await agentLoop(target.createModel(server.origin, { stream: true, apiKey }), [], initSession("s", "u")).catch((thrown: unknown) => thrown);
      expect(isContextOverflowError(error)).toBe(true);
    });

    it("discards a stream cut midway and repeats the call: nothing duplicated or half-written", async () => {
      fresh();
      const full = target.turnResponse({ text: "A complete answer, streamed in several pieces.", stopReason: "end_turn", usage: { input: 5, output: 9 } }, true);
      server.enqueue({ ...full, destroyAfterChunks: Math.max(1, Math.floor((full.chunks?.length ?? 2) / 2)) }, full);
      const session = await agentLoop(target.createModel(server.origin, { stream: true, apiKey }), [], initSession("s", "u"), {
        retry: { initialDelayMs: 1 },
      });
      expect(withoutTs(session).slice(2)).toStrictEqual([
        expect.objectContaining({ role: "assistant", content: "A complete answer, streamed in several pieces.", stopReason: "end_turn" }),
      ]);
      expect(server.requests).toHaveLength(2);
    });

    it("an abort cancels the HTTP request and ends the run as aborted", async () => {
      fresh();
      const full = target.turnResponse({ text: "This never finishes", stopReason: "end_turn", usage: { input: 1, output: 1 } }, true);
      server.enqueue({ ...full, chunks: full.chunks?.slice(0, 1) ?? [], hang: true });
      const controller = new AbortController();
      // Abort once the request is in: on a busy machine a fixed timer can fire before it is sent,
      // and the hanging response would then be left queued for the next test.
      const waitForRequest = setInterval(() => {
        if (server.requests.length === 0) return;
        clearInterval(waitForRequest);
        setTimeout(() => controller.abort(), 20);
      }, 5);
      const session = await agentLoop(target.createModel(server.origin, { stream: true, apiKey }), [], initSession("s", "u"), { signal: controller.signal });
      // The content is what streamed before the abort: nothing, or the start of the text (Gemini's first chunk carries text).
      const last = withoutTs(session).at(-1) as { content: string };
      expect(last).toStrictEqual({ role: "assistant", content: expect.any(String), stopReason: "aborted" });
      expect("This never finishes".startsWith(last.content)).toBe(true);
      await expect.poll(() => server.requests[0]?.clientClosed, { timeout: 5000 }).toBe(true);
    });

    // With eager starts off, nothing of a response that stopped at max_tokens runs. (With them on,
    // a call complete in the stream may already have started: the loop documents that. A call
    // whose JSON was cut comes after response-end and never starts: see eager-tools.test.ts.)
    it("does not run tool calls of a response cut by max_tokens (eager starts off)", async () => {
      fresh();
      server.enqueue(
        target.turnResponse({ toolCalls: [{ id: "call_cut", name: "lookup", input: { word: "x" } }], stopReason: "max_tokens", usage: { input: 1, output: 1 } }, true),
      );
      let ran = false;
      const session = await agentLoop(target.createModel(server.origin, { stream: true, apiKey }), [lookup], initSession("s", "u"), {
        toolHandlers: { lookup: () => (ran = true) },
        eagerTools: false,
      });
      expect(ran).toBe(false);
      expect(withoutTs(session).at(-1)).toMatchObject({ type: "tool_result", isError: true });
      expectEveryCallAnsweredOnce(session);
    });
  });
}

/**
 * The opt-in live check every adapter has: a one-tool agent against the real API. It runs only
 * when `enabled` (the provider's credentials are set), never in CI.
 */
export function liveAgentSuite(name: string, enabled: boolean, createModel: () => InvokeModel): void {
  describe.skipIf(!enabled)(`${name}: live`, () => {
    it("runs a one-tool agent against the real API", async () => {
      const add: ToolSchema = {
        name: "add",
        description: "Add two integers.",
        input_schema: { type: "object", properties: { a: { type: "integer" }, b: { type: "integer" } }, required: ["a", "b"] },
      };
      const session = await agentLoop(
        createModel(),
        [add],
        initSession("Use the add tool for arithmetic, then answer with the number only.", "What is 98765432101234 + 12345678909876?"),
        { toolHandlers: { add: (input: { a: number; b: number }) => String(input.a + input.b) }, maxIterations: 5 },
      );
      expectEveryCallAnsweredOnce(session);
      expect(session.messages.some((message) => "type" in message && message.type === "tool_call")).toBe(true);
      expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: expect.stringContaining("111111111011110") });
    }, 60_000);
  });
}
