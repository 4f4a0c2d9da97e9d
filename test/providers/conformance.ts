import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentLoop,
  filePart,
  imagePart,
  initSession,
  isAgentError,
  isContextOverflowError,
  isProviderError,
  response,
  tool,
  toolContent,
  type InvokeModel,
  type JsonObject,
  type ModelStreamEvent,
  type ProviderError,
  type ToolSchema,
} from "simple-agent-loop";
import { expectEveryCallAnsweredOnce, freePort, withoutTs, withoutAnswerer } from "../helpers.ts";
import { rawSse, startReplayServer, type ReplayResponse, type ReplayServer } from "./replay-server.ts";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertCassetteUsed, cassette } from "simple-agent-loop/testing";
import { downloadCases, passOnCases } from "./download-cases.ts";

/** A model turn, to be encoded in each provider's own wire format. */
export type WireTurn = {
  text?: string;
  toolCalls?: { id: string; name: string; input: JsonObject }[];
  stopReason: "end_turn" | "tool_use" | "max_tokens";
  usage: { input: number; output: number };
};

export type ErrorKind = "rate_limit" | "server" | "invalid_request" | "context_overflow";

/** What every adapter's factory takes, under the same names. */
export type ConformanceModelOptions = {
  stream: boolean;
  apiKey: string;
  headers?: Record<string, string>;
  idleTimeoutMs?: number;
  downloadParts?: false | { allow?: (url: string) => boolean; maxBytes?: number; timeoutMs?: number };
};

/** The suite's cases by name: an adapter may skip any of them, with the reason it does not apply. */
export type ConformanceCase =
  | "text-answer"
  | "parallel-tools"
  | "rate-limit-retry"
  | "server-error-retry"
  | "invalid-request"
  | "context-overflow"
  | "cut-midway"
  | "abort"
  | "max-tokens-cut"
  | "redirect"
  | "cut-after-events"
  | "idle-timeout"
  | "connection-failure"
  | "html-body"
  | "bounded-error-body"
  | "unreadable-event"
  | "body-failure"
  | "malformed-answer"
  | "user-image"
  | "user-pdf"
  | "tool-result-image"
  | "url-image"
  | "url-download-off"
  | "url-download-rules"
  | "unsupported-part"
  | "cassette"
  | "deferred-tools"
  | "asked-model";

/**
 * A content part as a request body carries it, read back from the provider's format: where it is
 * (`user` input, or the result of a tool call: inside it or, where the provider takes images only
 * from the user, in the user message that follows and names the call), and what it holds.
 */
export type WirePart = {
  in: "user" | "tool";
  kind: "text" | "image" | "file";
  text?: string;
  mediaType?: string;
  /** Base64, as the session holds it. */
  data?: string;
  url?: string;
};

/** What the shared suite needs to know about one adapter. */
export type ConformanceTarget = {
  name: string;
  createModel: (origin: string, options: ConformanceModelOptions) => InvokeModel;
  /** The provider's response to a turn: a JSON body, or SSE chunks when `stream`. */
  turnResponse: (turn: WireTurn, stream: boolean) => ReplayResponse;
  /** A provider error response; `rate_limit` must carry a retry-after of 0 seconds. */
  errorResponse: (kind: ErrorKind) => ReplayResponse;
  /** The tool results a recorded request body sends back, in order, read from the provider's format. */
  toolResultsIn: (body: unknown) => { id: string; output: string }[];
  /** The tool calls a recorded request body replays, in order. */
  toolCallsIn: (body: unknown) => { id: string; name: string }[];
  /** The names of the tools a request body offers, in the order sent. */
  toolNamesIn: (body: unknown) => string[];
  /** Raw event payloads (not necessarily JSON) in the provider's stream framing; default SSE `data:` lines. */
  rawEvents?: (payloads: readonly string[]) => ReplayResponse;
  /** The adapter's exported stream reader (e.g. `streamMessages`), fed by `open` instead of a request of its own. */
  readStream: (open: () => Promise<Response>) => AsyncIterable<ModelStreamEvent>;
  /** The model id `turnResponse` names as the one that answered (recorded as `model` on the turn). */
  answeringModel: string;
  /** Cases that do not apply to this adapter, each with its reason (shown in the skipped test's name). */
  skip?: Partial<Record<ConformanceCase, string>>;
  /** The content parts of a request body, in order (system and assistant content left out). */
  contentIn: (body: unknown) => WirePart[];
  /** Whether the provider fetches an https image URL itself; if not, the adapter downloads it. */
  fetchesImageUrls: boolean;
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
    const fresh = (): void => server.reset();
    const check = (name: ConformanceCase, title: string, test: () => Promise<void>): void =>
      caseOf(target, name, title, test);

    for (const stream of [true, false]) {
      const mode = stream ? "streamed" : "not streamed";

      check(
        "cassette",
        `a cassette records a tool round trip over HTTP and replays it with no request sent (${mode})`,
        async () => {
          fresh();
          server.enqueue(
            target.turnResponse(
              {
                toolCalls: [{ id: "call_rec", name: "lookup", input: { word: "tape" } }],
                stopReason: "tool_use",
                usage: { input: 20, output: 10 },
              },
              stream,
            ),
            target.turnResponse({ text: "Recorded.", stopReason: "end_turn", usage: { input: 30, output: 2 } }, stream),
          );
          const path = join(mkdtempSync(join(tmpdir(), "sal-cassette-")), "run.jsonl");
          const options = { toolHandlers: { lookup: (input: { word: string }) => `definition of ${input.word}` } };
          const live = cassette(target.createModel(server.origin, { stream, apiKey }), { path, mode: "record" });
          const recorded = await agentLoop(live, [lookup], initSession("s", "look up tape"), options);
          expect(server.requests).toHaveLength(2);
          const file = readFileSync(path, "utf8");
          expect(file.trim().split("\n")).toHaveLength(2);
          expect(file).not.toContain(apiKey);
          fresh(); // nothing queued: a request sent now would fail the run
          const offline = cassette(target.createModel(server.origin, { stream, apiKey }), { path, mode: "replay" });
          const replayed = await agentLoop(offline, [lookup], initSession("s", "look up tape"), options);
          expect(server.requests).toHaveLength(0);
          expect(withoutTs(replayed)).toStrictEqual(withoutTs(recorded));
          assertCassetteUsed(offline);
        },
      );

      check(
        "deferred-tools",
        `a tool loaded mid-run (deferred, found by search_tools) is offered after the others from the next call on, and called (${mode})`,
        async () => {
          fresh();
          server.enqueue(
            target.turnResponse(
              {
                toolCalls: [{ id: "call_search", name: "search_tools", input: { query: "weather forecast" } }],
                stopReason: "tool_use",
                usage: { input: 20, output: 10 },
              },
              stream,
            ),
            target.turnResponse(
              {
                toolCalls: [{ id: "call_weather", name: "weather", input: { city: "Oslo" } }],
                stopReason: "tool_use",
                usage: { input: 30, output: 10 },
              },
              stream,
            ),
            target.turnResponse(
              { text: "Rain in Oslo.", stopReason: "end_turn", usage: { input: 40, output: 4 } },
              stream,
            ),
          );
          const weather = tool({
            name: "weather",
            description: "The weather forecast for a city.",
            inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
            deferred: true,
            handler: (input) => `rain in ${String(input.city)}`,
          });
          const session = await agentLoop(
            target.createModel(server.origin, { stream, apiKey }),
            [lookup, weather],
            initSession("s", "weather in Oslo?"),
            { toolHandlers: { lookup: () => "unused" } },
          );
          expect(response(session)?.content).toBe("Rain in Oslo.");
          expectEveryCallAnsweredOnce(session);
          const offered = server.requests.map((request) => target.toolNamesIn(request.body));
          // The tool list only grows at its end: the part of the request before it stays the same.
          expect(offered).toStrictEqual([
            ["lookup", "search_tools"],
            ["lookup", "search_tools", "weather"],
            ["lookup", "search_tools", "weather"],
          ]);
          const last = server.requests[2]!.body;
          expect(target.toolCallsIn(last).map((call) => call.name)).toStrictEqual(["search_tools", "weather"]);
          expect(target.toolResultsIn(last).at(-1)?.output).toBe("rain in Oslo");
        },
      );

      check("text-answer", `answers with text, stop reason and usage (${mode})`, async () => {
        fresh();
        server.enqueue(
          target.turnResponse(
            { text: "Hello there!", stopReason: "end_turn", usage: { input: 12, output: 3 } },
            stream,
          ),
        );
        const session = await agentLoop(
          target.createModel(server.origin, { stream, apiKey }),
          [],
          initSession("Be brief.", "Say hello"),
        );
        expect(withoutAnswerer(withoutTs(session).slice(2))).toStrictEqual([
          {
            role: "assistant",
            content: "Hello there!",
            stopReason: "end_turn",
            usage: expect.objectContaining({ inputTokens: 12, outputTokens: 3 }),
          },
        ]);
        // Who answered: the response's model id (the one asked for where the provider names none).
        expect(session.messages.at(-1)).toHaveProperty("model", target.answeringModel);
        expect(server.requests).toHaveLength(1);
      });

      check(
        "asked-model",
        `a response that names no model records the model asked for, so its price is known (${mode})`,
        async () => {
          fresh();
          const answer = target.turnResponse(
            { text: "Hi.", stopReason: "end_turn", usage: { input: 12, output: 3 } },
            stream,
          );
          server.enqueue(withoutModelName(answer));
          const session = await agentLoop(
            target.createModel(server.origin, { stream, apiKey }),
            [],
            initSession("Be brief.", "Say hi"),
            { settings: { model: "asked-model-1" } },
          );
          expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "Hi.", model: "asked-model-1" });
        },
      );

      check(
        "parallel-tools",
        `runs parallel tool calls and sends every result back, paired by id, in call order (${mode})`,
        async () => {
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
            target.turnResponse(
              { text: "Both found.", stopReason: "end_turn", usage: { input: 40, output: 4 } },
              stream,
            ),
          );
          const looked: string[] = [];
          const session = await agentLoop(
            target.createModel(server.origin, { stream, apiKey }),
            [lookup],
            initSession("s", "look up alpha and beta"),
            {
              toolHandlers: {
                lookup: async (input: { word: string }) => {
                  looked.push(input.word);
                  await new Promise((resolve) => setTimeout(resolve, input.word === "alpha" ? 20 : 0));
                  return `definition of ${input.word}`;
                },
              },
            },
          );
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
        },
      );

      check("rate-limit-retry", `retries a rate limit, honouring retry-after (${mode})`, async () => {
        fresh();
        server.enqueue(
          target.errorResponse("rate_limit"),
          target.turnResponse({ text: "ok", stopReason: "end_turn", usage: { input: 1, output: 1 } }, stream),
        );
        const retries: number[] = [];
        const session = await agentLoop(
          target.createModel(server.origin, { stream, apiKey }),
          [],
          initSession("s", "u"),
          {
            onEvent: (event) => {
              if (event.type === "retry") retries.push(event.delayMs);
            },
          },
        );
        expect(response(session)?.content).toBe("ok");
        expect(retries).toStrictEqual([0]);
        expect(server.requests).toHaveLength(2);
      });

      check("server-error-retry", `retries a server error (${mode})`, async () => {
        fresh();
        server.enqueue(
          target.errorResponse("server"),
          target.turnResponse({ text: "ok", stopReason: "end_turn", usage: { input: 1, output: 1 } }, stream),
        );
        const session = await agentLoop(
          target.createModel(server.origin, { stream, apiKey }),
          [],
          initSession("s", "u"),
          {
            retry: { initialDelayMs: 1 },
          },
        );
        expect(response(session)?.content).toBe("ok");
      });
    }

    check(
      "invalid-request",
      "throws a typed, non-retryable error for an invalid request, without the API key, adding nothing",
      async () => {
        fresh();
        server.enqueue(target.errorResponse("invalid_request"));
        const session = initSession("s", "u");
        const error = (await agentLoop(target.createModel(server.origin, { stream: true, apiKey }), [], session).catch(
          (thrown: unknown) => thrown,
        )) as ProviderError;
        expect(isProviderError(error)).toBe(true);
        expect(error).toMatchObject({ provider: target.name, status: 400, retryable: false });
        expect(error.message).not.toContain(apiKey);
        expect(JSON.stringify(error)).not.toContain(apiKey);
        expect(session.messages).toHaveLength(2);
        expect(server.requests).toHaveLength(1);
      },
    );

    check("context-overflow", "recognises a context overflow", async () => {
      fresh();
      server.enqueue(target.errorResponse("context_overflow"));
      const error = await agentLoop(
        target.createModel(server.origin, { stream: true, apiKey }),
        [],
        initSession("s", "u"),
      ).catch((thrown: unknown) => thrown);
      expect(isContextOverflowError(error)).toBe(true);
    });

    check(
      "cut-midway",
      "discards a stream cut midway and repeats the call: nothing duplicated or half-written",
      async () => {
        fresh();
        const full = target.turnResponse(
          {
            text: "A complete answer, streamed in several pieces.",
            stopReason: "end_turn",
            usage: { input: 5, output: 9 },
          },
          true,
        );
        server.enqueue({ ...full, destroyAfterChunks: Math.max(1, Math.floor((full.chunks?.length ?? 2) / 2)) }, full);
        const session = await agentLoop(
          target.createModel(server.origin, { stream: true, apiKey }),
          [],
          initSession("s", "u"),
          {
            retry: { initialDelayMs: 1 },
          },
        );
        expect(withoutTs(session).slice(2)).toStrictEqual([
          expect.objectContaining({
            role: "assistant",
            content: "A complete answer, streamed in several pieces.",
            stopReason: "end_turn",
          }),
        ]);
        expect(server.requests).toHaveLength(2);
      },
    );

    check("abort", "an abort cancels the HTTP request and ends the run as aborted", async () => {
      fresh();
      const full = target.turnResponse(
        { text: "This never finishes", stopReason: "end_turn", usage: { input: 1, output: 1 } },
        true,
      );
      server.enqueue({ ...full, chunks: full.chunks?.slice(0, 1) ?? [], hang: true });
      const controller = new AbortController();
      const run = agentLoop(target.createModel(server.origin, { stream: true, apiKey }), [], initSession("s", "u"), {
        signal: controller.signal,
      });
      // Once the server has the request, however slow the machine: then the abort must reach it.
      await expect.poll(() => server.requests.length, { timeout: 10_000 }).toBe(1);
      controller.abort();
      const session = await run;
      // The content is what streamed before the abort: nothing, or the start of the text (Gemini's first chunk carries text).
      const last = withoutTs(session).at(-1) as { content: string };
      expect(last).toStrictEqual({ role: "assistant", content: expect.any(String), stopReason: "aborted" });
      expect("This never finishes".startsWith(last.content)).toBe(true);
      await expect.poll(() => server.requests[0]?.clientClosed, { timeout: 5000 }).toBe(true);
    });

    check(
      "abort",
      "an abort with a reason of the caller's own ends the run as aborted, never as a provider failure to repeat",
      async () => {
        fresh();
        const full = target.turnResponse(
          { text: "This never finishes", stopReason: "end_turn", usage: { input: 1, output: 1 } },
          true,
        );
        server.enqueue({ ...full, chunks: full.chunks?.slice(0, 1) ?? [], hang: true });
        const controller = new AbortController();
        const run = agentLoop(target.createModel(server.origin, { stream: true, apiKey }), [], initSession("s", "u"), {
          signal: controller.signal,
          retry: { initialDelayMs: 1 },
        });
        await expect.poll(() => server.requests.length, { timeout: 10_000 }).toBe(1);
        controller.abort(new Error("the user closed the tab"));
        const session = await run;
        expect(withoutTs(session).at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
        expect(server.requests).toHaveLength(1);
      },
    );

    transportCases(target, () => server, fresh);
    contentCases(target, () => server, fresh);
    downloadCases(
      target,
      () => server,
      fresh,
      () => target.turnResponse({ text: "I see it.", stopReason: "end_turn", usage: { input: 5, output: 3 } }, true),
    );
    passOnCases(
      target,
      () => server,
      fresh,
      () => target.turnResponse({ text: "I see it.", stopReason: "end_turn", usage: { input: 5, output: 3 } }, true),
    );

    // With eager starts off, nothing of a response that stopped at max_tokens runs. (With them on,
    // a call complete in the stream may already have started: the loop documents that. A call
    // whose JSON was cut comes after response-end and never starts: see eager-tools.test.ts.)
    check("max-tokens-cut", "does not run tool calls of a response cut by max_tokens (eager starts off)", async () => {
      fresh();
      server.enqueue(
        target.turnResponse(
          {
            toolCalls: [{ id: "call_cut", name: "lookup", input: { word: "x" } }],
            stopReason: "max_tokens",
            usage: { input: 1, output: 1 },
          },
          true,
        ),
      );
      let ran = false;
      const session = await agentLoop(
        target.createModel(server.origin, { stream: true, apiKey }),
        [lookup],
        initSession("s", "u"),
        {
          toolHandlers: { lookup: () => (ran = true) },
          eagerTools: false,
        },
      );
      expect(ran).toBe(false);
      expect(withoutTs(session).at(-1)).toMatchObject({ type: "tool_result", isError: true });
      expectEveryCallAnsweredOnce(session);
    });
  });
}

// A 1x1 PNG and a one-line PDF: real bytes, small enough to read in a failure.
const pngData = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const pdfData = "JVBERi0xLjQKJcOkw7zDtsOfCjEgMCBvYmoKPDwvVHlwZS9DYXRhbG9nPj4KZW5kb2JqCnRyYWlsZXIKPDw+PgolJUVPRgo=";

// Images and files, in user messages and tool results, by data and by URL: each adapter sends
// them as its provider takes them, downloads what its provider cannot fetch, and refuses, before
// any request, what its provider cannot take.
function contentCases(target: ConformanceTarget, current: () => ReplayServer, fresh: () => void): void {
  const check = (name: ConformanceCase, title: string, test: () => Promise<void>): void =>
    caseOf(target, name, title, test, 20_000);
  const answer = (): ReplayResponse =>
    target.turnResponse({ text: "I see it.", stopReason: "end_turn", usage: { input: 5, output: 3 } }, true);
  const sentParts = (index: number): WirePart[] => target.contentIn(current().requests[index]!.body);

  check("user-image", "sends a user message's text and image", async () => {
    fresh();
    current().enqueue(answer());
    await agentLoop(
      target.createModel(current().origin, { stream: true, apiKey }),
      [],
      initSession("s", [{ type: "text", text: "What is this?" }, imagePart(pngData, "image/png")]),
    );
    expect(sentParts(0)).toStrictEqual([
      { in: "user", kind: "text", text: "What is this?" },
      { in: "user", kind: "image", mediaType: "image/png", data: pngData },
    ]);
  });

  check("user-pdf", "sends a user message's PDF", async () => {
    fresh();
    current().enqueue(answer());
    await agentLoop(
      target.createModel(current().origin, { stream: true, apiKey }),
      [],
      initSession("s", [{ type: "text", text: "Summarize." }, filePart(pdfData, "application/pdf", "report.pdf")]),
    );
    expect(sentParts(0)).toStrictEqual([
      { in: "user", kind: "text", text: "Summarize." },
      { in: "user", kind: "file", mediaType: "application/pdf", data: pdfData },
    ]);
  });

  check("tool-result-image", "sends a tool result's text and image as the result of its call", async () => {
    fresh();
    current().enqueue(
      target.turnResponse(
        {
          toolCalls: [{ id: "call_shot", name: "lookup", input: { word: "screen" } }],
          stopReason: "tool_use",
          usage: { input: 5, output: 3 },
        },
        true,
      ),
      answer(),
    );
    await agentLoop(
      target.createModel(current().origin, { stream: true, apiKey }),
      [lookup],
      initSession("s", "Look."),
      {
        toolHandlers: {
          lookup: () => toolContent([{ type: "text", text: "screenshot of /" }, imagePart(pngData, "image/png")]),
        },
      },
    );
    expect(sentParts(1)).toStrictEqual([
      { in: "user", kind: "text", text: "Look." },
      { in: "tool", kind: "text", text: "screenshot of /" },
      { in: "tool", kind: "image", mediaType: "image/png", data: pngData },
    ]);
  });

  check(
    "url-image",
    "sends an image URL the provider fetches, or downloads it through the adapter's fetch",
    async () => {
      fresh();
      const url = `${current().origin}/cat.png`;
      if (!target.fetchesImageUrls)
        current().enqueue({ headers: { "content-type": "image/png" }, body: Buffer.from(pngData, "base64") });
      current().enqueue(answer());
      // The replay server is on a loopback address, which only `allow` lets an adapter download from.
      const downloadParts = { allow: (asked: string) => asked === url };
      await agentLoop(
        target.createModel(current().origin, { stream: true, apiKey, downloadParts }),
        [],
        initSession("s", [{ type: "image", url }]),
      );
      if (target.fetchesImageUrls) {
        expect(current().requests).toHaveLength(1);
        expect(sentParts(0)).toStrictEqual([{ in: "user", kind: "image", url }]);
      } else {
        expect(current().requests.map((request) => request.method)).toStrictEqual(["GET", "POST"]);
        expect(current().requests[0]!.url).toBe("/cat.png");
        expect(sentParts(1)).toStrictEqual([{ in: "user", kind: "image", mediaType: "image/png", data: pngData }]);
      }
    },
  );

  check(
    "url-download-off",
    "with downloadParts: false, refuses a URL its provider cannot fetch, before any request",
    async () => {
      fresh();
      const session = initSession("s", [{ type: "image", url: "https://example.com/cat.png" }]);
      const model = target.createModel(current().origin, { stream: true, apiKey, downloadParts: false });
      const error: unknown = await agentLoop(model, [], session).catch((thrown: unknown) => thrown);
      expect(isAgentError(error)).toBe(true);
      expect((error as Error).message).toMatch(
        new RegExp(
          `the ${target.name}[a-z-]* adapter cannot send an image part \\("https://example.com/cat.png"\\) in a user message: .*downloadParts: false`,
        ),
      );
      expect(current().requests).toHaveLength(0);
    },
  );

  check(
    "unsupported-part",
    "refuses an image type its provider cannot take, naming part and adapter, before any request",
    async () => {
      fresh();
      const session = initSession("s", [imagePart(pngData, "image/tiff")]);
      const error: unknown = await agentLoop(
        target.createModel(current().origin, { stream: true, apiKey }),
        [],
        session,
      ).catch((thrown: unknown) => thrown);
      expect(isAgentError(error)).toBe(true);
      expect((error as Error).message).toMatch(
        /adapter cannot send an image part \(image\/tiff, 1 KB\) in a user message/,
      );
      expect(current().requests).toHaveLength(0);
    },
  );
}

const teamSecret = "team-secret-header-value-0123";

// Bytes in, typed failures out: redirects, cuts, stalls, refused connections, bodies that are not
// the stream asked for, oversized or garbled ones. The same for every adapter.
function transportCases(target: ConformanceTarget, current: () => ReplayServer, fresh: () => void): void {
  const check = (name: ConformanceCase, title: string, test: () => Promise<void>): void =>
    caseOf(target, name, title, test, 20_000);
  const answer = (): ReplayResponse =>
    target.turnResponse(
      {
        text: "A complete answer, streamed in several pieces.",
        stopReason: "end_turn",
        usage: { input: 5, output: 9 },
      },
      true,
    );
  const failure = async (model: InvokeModel): Promise<ProviderError> => {
    const error = await agentLoop(model, [], initSession("s", "u"), { retry: false }).catch(
      (thrown: unknown) => thrown,
    );
    expect(isProviderError(error)).toBe(true);
    return error as ProviderError;
  };
  // Every run of 8 characters of the key: a parser's excerpt may cut it anywhere.
  const expectNoPartOfKey = (text: string): void => {
    for (let at = 0; at + 8 <= apiKey.length; at++) expect(text).not.toContain(apiKey.slice(at, at + 8));
  };

  for (const status of [301, 302, 307, 308]) {
    check(
      "redirect",
      `refuses a ${status} redirect to another origin: neither the key nor a user header goes there`,
      async () => {
        fresh();
        const elsewhere = await startReplayServer();
        try {
          elsewhere.enqueue(answer());
          current().enqueue({ status, headers: { location: `${elsewhere.origin}/collect` } });
          const error = await failure(
            target.createModel(current().origin, { stream: true, apiKey, headers: { "x-team-secret": teamSecret } }),
          );
          expect(error).toMatchObject({ provider: target.name, status, retryable: false });
          expect(error.message).toContain(elsewhere.origin);
          expect(error.message).toContain("redirect");
          expect(elsewhere.requests).toStrictEqual([]);
          expect(current().requests).toHaveLength(1);
        } finally {
          await elsewhere.close();
        }
      },
    );
  }

  check("redirect", "follows a 307 on the same origin, with the credentials and headers the call had", async () => {
    fresh();
    current().enqueue({ status: 307, headers: { location: `${current().origin}/moved/here` } }, answer());
    const session = await agentLoop(
      target.createModel(current().origin, { stream: true, apiKey, headers: { "x-team-secret": teamSecret } }),
      [],
      initSession("s", "u"),
    );
    expect(response(session)?.content).toBe("A complete answer, streamed in several pieces.");
    expect(current().requests.map((request) => request.url.split("?")[0])).toStrictEqual([
      expect.not.stringContaining("/moved"),
      "/moved/here",
    ]);
    expect(current().requests[1]!.headers["x-team-secret"]).toBe(teamSecret);
    expect(current().requests[1]!.body).toStrictEqual(current().requests[0]!.body);
  });

  check("cut-after-events", "retries a stream cut after some of its events were read", async () => {
    fresh();
    const full = answer();
    const chunks = full.chunks ?? [];
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    current().enqueue({ ...full, chunkDelayMs: 15, destroyAfterChunks: Math.max(2, chunks.length - 1) }, full);
    const seen: string[] = [];
    const session = await agentLoop(
      target.createModel(current().origin, { stream: true, apiKey }),
      [],
      initSession("s", "u"),
      {
        retry: { initialDelayMs: 1 },
        onEvent: (event) => {
          if (event.type === "text-delta") seen.push("delta");
          if (event.type === "retry") seen.push(`retry: ${event.error}`);
        },
      },
    );
    const retry = seen.findIndex((entry) => entry.startsWith("retry"));
    expect(retry).toBeGreaterThan(0);
    expect(seen[retry]).toContain(target.name);
    expect(withoutTs(session).slice(2)).toStrictEqual([
      expect.objectContaining({
        role: "assistant",
        content: "A complete answer, streamed in several pieces.",
        stopReason: "end_turn",
      }),
    ]);
    expect(current().requests).toHaveLength(2);
  });

  check(
    "idle-timeout",
    "a stream that stalls after its first bytes fails after idleTimeoutMs, retryable, and is repeated",
    async () => {
      fresh();
      const full = answer();
      current().enqueue({ ...full, chunks: full.chunks?.slice(0, 1) ?? [], hang: true }, full);
      const retries: string[] = [];
      const session = await agentLoop(
        target.createModel(current().origin, { stream: true, apiKey, idleTimeoutMs: 500 }),
        [],
        initSession("s", "u"),
        {
          retry: { initialDelayMs: 1 },
          onEvent: (event) => {
            if (event.type === "retry") retries.push(event.error);
          },
        },
      );
      expect(retries[0]).toContain("idleTimeoutMs");
      expect(response(session)?.content).toBe("A complete answer, streamed in several pieces.");
      await expect.poll(() => current().requests[0]?.clientClosed, { timeout: 5000 }).toBe(true);
    },
  );

  check(
    "idle-timeout",
    "a server that never sends the headers of a stream fails after idleTimeoutMs, retryable",
    async () => {
      fresh();
      current().enqueue({ stallBeforeHeaders: true });
      const error = await failure(target.createModel(current().origin, { stream: true, apiKey, idleTimeoutMs: 300 }));
      expect(error).toMatchObject({ provider: target.name, retryable: true });
      expect(error.message).toContain("idleTimeoutMs");
      await expect.poll(() => current().requests[0]?.clientClosed, { timeout: 5000 }).toBe(true);
    },
  );

  check(
    "idle-timeout",
    "a JSON answer whose body stalls after its headers fails after idleTimeoutMs, retryable (not streamed)",
    async () => {
      fresh();
      current().enqueue({ headers: { "content-type": "application/json" }, chunks: ['{"id": "'], hang: true });
      const error = await failure(target.createModel(current().origin, { stream: false, apiKey, idleTimeoutMs: 300 }));
      expect(error).toMatchObject({ provider: target.name, retryable: true });
      expect(error.message).toContain("idleTimeoutMs");
      await expect.poll(() => current().requests[0]?.clientClosed, { timeout: 5000 }).toBe(true);
    },
  );

  check(
    "idle-timeout",
    "rejects an idleTimeoutMs that is not a positive number when the model is created",
    async () => {
      for (const idleTimeoutMs of [0, -1, Number.NaN]) {
        expect(() => target.createModel(current().origin, { stream: true, apiKey, idleTimeoutMs })).toThrow(RangeError);
      }
    },
  );

  check("connection-failure", "a refused connection names its cause and its target, and is retryable", async () => {
    const port = await freePort();
    const error = await failure(target.createModel(`http://127.0.0.1:${port}`, { stream: true, apiKey }));
    expect(error).toMatchObject({ provider: target.name, retryable: true });
    expect(error.message).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
    expect(error.message).toContain(`http://127.0.0.1:${port}/`);
  });

  for (const stream of [true, false]) {
    check(
      "html-body",
      `a 200 with an HTML page says what came back, in a bounded excerpt (${stream ? "streamed" : "not streamed"})`,
      async () => {
        fresh();
        const page = `<!doctype html><html><head><title>Sign in to Corporate Proxy</title></head><body>${"<p>filler</p>".repeat(20_000)}</body></html>`;
        current().enqueue({ status: 200, headers: { "content-type": "text/html; charset=utf-8" }, body: page });
        const error = await failure(target.createModel(current().origin, { stream, apiKey }));
        expect(error).toMatchObject({ provider: target.name, retryable: false });
        expect(error.message).toContain("text/html");
        expect(error.message).toContain("Sign in to Corporate Proxy");
        expect(error.message.length).toBeLessThan(1500);
      },
    );
  }

  check(
    "bounded-error-body",
    "reads only the start of an error body that never ends, and says what it was",
    async () => {
      fresh();
      const start = JSON.stringify({ error: { message: "upstream exploded" } }).slice(0, -2);
      current().enqueue({
        status: 500,
        headers: { "content-type": "application/json" },
        chunks: [
          start,
          ..."x"
            .repeat(64)
            .split("")
            .map(() => "x".repeat(64 * 1024)),
        ],
        hang: true,
      });
      const error = await failure(target.createModel(current().origin, { stream: true, apiKey }));
      expect(error).toMatchObject({ provider: target.name, status: 500, retryable: true });
      expect(error.message).toContain("upstream exploded");
      expect(error.message.length).toBeLessThan(1500);
      await expect.poll(() => current().requests[0]?.clientClosed, { timeout: 5000 }).toBe(true);
    },
  );

  check(
    "bounded-error-body",
    "refuses a JSON answer whose content-length is over the cap before reading it",
    async () => {
      fresh();
      current().enqueue({
        headers: { "content-type": "application/json", "content-length": String(200 * 1024 * 1024) },
        chunks: ['{"id": "'],
        hang: true,
      });
      const error = await failure(target.createModel(current().origin, { stream: false, apiKey }));
      expect(error).toMatchObject({ provider: target.name, status: 200, retryable: false });
      expect(error.message).toContain(String(200 * 1024 * 1024));
      await expect.poll(() => current().requests[0]?.clientClosed, { timeout: 5000 }).toBe(true);
    },
  );

  // A body that fails once its stream has begun, however it fails, is one typed, retryable error:
  // the loop repeats the call, and a reader of the error learns the same thing from every adapter.
  check(
    "body-failure",
    "a body that fails mid-stream (reset, garbled event, stall) is the same typed, retryable error for every adapter",
    async () => {
      const full = answer();
      const started = (full.chunks ?? []).slice(0, 2);
      const garbled = (target.rawEvents ?? rawSse)(["{not json at all"]);
      const failures = [
        {
          why: "reset",
          response: { ...full, chunkDelayMs: 15, destroyAfterChunks: 2 },
          idleTimeoutMs: undefined,
          message: "the response broke off: ",
        },
        {
          why: "garbled",
          response: { ...garbled, chunks: [...started, ...(garbled.chunks ?? [])] },
          idleTimeoutMs: undefined,
          message: "unreadable stream event: {not json at all",
        },
        {
          why: "stall",
          response: { ...full, chunks: started, hang: true },
          idleTimeoutMs: 300,
          message: "no data from the server for 300 ms while waiting for the next part of the body",
        },
      ];
      for (const failure of failures) {
        fresh();
        current().enqueue(failure.response);
        const model = target.createModel(current().origin, {
          stream: true,
          apiKey,
          ...(failure.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: failure.idleTimeoutMs }),
        });
        const error = await agentLoop(model, [], initSession("s", "u"), { retry: false }).catch(
          (thrown: unknown) => thrown,
        );
        expect({ why: failure.why, ...typedShape(error) }).toStrictEqual({
          why: failure.why,
          name: "ProviderError",
          provider: target.name,
          retryable: true,
          status: undefined,
        });
        expect(
          (error as Error).message.startsWith(`${target.name}: ${failure.message}`),
          `${failure.why}: ${(error as Error).message}`,
        ).toBe(true);
      }
    },
  );

  check(
    "body-failure",
    "the exported stream reader types a failure of its own open and of its body, as the model does",
    async () => {
      const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
      const opens: [string, () => Promise<Response>][] = [
        ["open rejects", () => Promise.reject(reset)],
        [
          "body errors",
          async () => new Response(new ReadableStream({ pull: (controller) => controller.error(reset) })),
        ],
        ["no body", async () => new Response(null)],
      ];
      for (const [why, open] of opens) {
        const error = await drain(target.readStream(open)).catch((thrown: unknown) => thrown);
        expect({ why, ...typedShape(error) }).toStrictEqual({
          why,
          name: "ProviderError",
          provider: target.name,
          retryable: true,
          status: undefined,
        });
      }
    },
  );

  check(
    "malformed-answer",
    "a 200 JSON answer that is not an answer at all (null) is a typed, retryable error, not a TypeError (not streamed)",
    async () => {
      fresh();
      current().enqueue({ body: "null" });
      const error = await agentLoop(
        target.createModel(current().origin, { stream: false, apiKey }),
        [],
        initSession("s", "u"),
        { retry: false },
      ).catch((thrown: unknown) => thrown);
      expect(typedShape(error)).toStrictEqual({
        name: "ProviderError",
        provider: target.name,
        retryable: true,
        status: undefined,
      });
    },
  );

  check(
    "unreadable-event",
    "an unreadable stream event fails retryably and never echoes the key, whole or in part",
    async () => {
      fresh();
      const garbled = `{"note": ${apiKey} and more}`;
      current().enqueue((target.rawEvents ?? rawSse)([garbled]));
      const error = await failure(target.createModel(current().origin, { stream: true, apiKey }));
      expect(error).toMatchObject({ provider: target.name, retryable: true });
      expectNoPartOfKey(error.message);
      expectNoPartOfKey(JSON.stringify(error));
      expectNoPartOfKey(String((error.cause as Error | undefined)?.message));
    },
  );
}

// One case of the suite; when the target skips it, the same case, reported skipped with the reason in its name.
function caseOf(
  target: ConformanceTarget,
  name: ConformanceCase,
  title: string,
  test: () => Promise<void>,
  timeout?: number,
): void {
  const reason = target.skip?.[name];
  if (reason === undefined) it(title, test, timeout);
  else it.skip(`${title} (skipped: ${reason})`, test);
}

// The fields a caller decides on: which error, whose, whether to repeat the call.
function typedShape(
  error: unknown,
): { name: string; provider: string; retryable: boolean; status: number | undefined } | { notTyped: unknown } {
  if (!isProviderError(error)) return { notTyped: error };
  return { name: error.name, provider: error.provider, retryable: error.retryable, status: error.status };
}

async function drain(events: AsyncIterable<ModelStreamEvent>): Promise<void> {
  for await (const _event of events) {
    // read to the end or to the failure
  }
}

/**
 * The opt-in live check every adapter has: a one-tool agent against the real API. It runs only
 * when `enabled` (the provider's credentials are set), never in CI.
 */
export function liveAgentSuite(name: string, enabled: boolean, createModel: () => InvokeModel): void {
  // A skipped test says why, in its name and its note, wherever the report shows it.
  const skipped = "no API key: live provider tests skipped";
  describe(enabled ? `${name}: live` : `${name}: live (${skipped})`, () => {
    it("runs a one-tool agent against the real API", async (context) => {
      if (!enabled) {
        // The default reporter counts skipped tests without naming them: say it where it shows.
        console.warn(`${name}: ${skipped}`);
        return context.skip(skipped);
      }
      const add: ToolSchema = {
        name: "add",
        description: "Add two integers.",
        input_schema: {
          type: "object",
          properties: { a: { type: "integer" }, b: { type: "integer" } },
          required: ["a", "b"],
        },
      };
      const session = await agentLoop(
        createModel(),
        [add],
        initSession(
          "Use the add tool for arithmetic, then answer with the number only.",
          "What is 98765432101234 + 12345678909876?",
        ),
        { toolHandlers: { add: (input: { a: number; b: number }) => String(input.a + input.b) }, maxIterations: 5 },
      );
      expectEveryCallAnsweredOnce(session);
      expect(session.messages.some((message) => "type" in message && message.type === "tool_call")).toBe(true);
      expect(session.messages.at(-1)).toMatchObject({
        role: "assistant",
        content: expect.stringContaining("111111111011110"),
      });
    }, 60_000);
  });
}

// The response as the provider would send it if it named no model: the model fields emptied
// (Bedrock's binary stream names none anyway).
function withoutModelName(response: ReplayResponse): ReplayResponse {
  const empty = (piece: string | Uint8Array): string | Uint8Array =>
    typeof piece === "string" ? piece.replace(/"(model|modelVersion)":\s*"[^"]*"/g, '"$1":""') : piece;
  return {
    ...response,
    ...(response.body === undefined ? {} : { body: empty(response.body) }),
    ...(response.chunks === undefined ? {} : { chunks: response.chunks.map(empty) }),
  };
}
