// The rule every adapter that downloads URL parts holds to: a URL part is a request the server
// makes for whoever wrote the part, so by default only https: URLs on public addresses are
// fetched, each redirect checked again, within a size cap and a time limit.
import { expect, it } from "vitest";
import { agentLoop, initSession, isAgentError, toolContent, type InvokeModel } from "simple-agent-loop";
import type { ConformanceTarget } from "./conformance.ts";
import type { ReplayResponse, ReplayServer } from "./replay-server.ts";

const pdf = Buffer.from("%PDF-1.4\n%%EOF\n");

/** What a downloading adapter's factory takes here, beside the conformance options. */
type DownloadModel = (origin: string, downloadParts?: unknown) => InvokeModel;

/**
 * The download cases, for an adapter that downloads the URL of a `file` part (skipped, with the
 * reason, by one that passes URLs on: `target.skip["url-download-rules"]`).
 */
export function downloadCases(
  target: ConformanceTarget,
  current: () => ReplayServer,
  fresh: () => void,
  answer: () => ReplayResponse,
): void {
  const reason = target.skip?.["url-download-rules"];
  const check = (title: string, test: () => Promise<void>): void => {
    if (reason === undefined) it(title, test, 20_000);
    else it.skip(`${title} (skipped: ${reason})`, test);
  };
  const model: DownloadModel = (origin, downloadParts) =>
    target.createModel(origin, {
      stream: true,
      apiKey: "sk-test-conformance-0123456789",
      ...(downloadParts === undefined ? {} : { downloadParts }),
    } as Parameters<ConformanceTarget["createModel"]>[1]);
  const fileSession = (url: string): ReturnType<typeof initSession> =>
    initSession("s", [{ type: "file", url, mediaType: "application/pdf", filename: "export.pdf" }]);
  const failure = async (invoke: InvokeModel, url: string): Promise<Error> => {
    const error: unknown = await agentLoop(invoke, [], fileSession(url)).catch((thrown: unknown) => thrown);
    expect(isAgentError(error), String(error)).toBe(true);
    return error as Error;
  };

  check("by default refuses a URL part on a loopback address in every notation, before any request", async () => {
    fresh();
    const port = new URL(current().origin).port;
    const cases: [string, RegExp][] = [
      [`${current().origin}/admin/export`, /only https: URLs are downloaded by default/],
      [`https://127.0.0.1:${port}/admin/export`, /its host is 127\.0\.0\.1, a loopback address/],
      [`https://2130706433:${port}/admin`, /its host is 127\.0\.0\.1, a loopback address/],
      [`https://0177.0.0.1:${port}/admin`, /its host is 127\.0\.0\.1, a loopback address/],
      [`https://0x7f.1:${port}/admin`, /its host is 127\.0\.0\.1, a loopback address/],
      [`https://[::1]:${port}/admin`, /its host is ::1, a loopback address/],
      [`https://[::ffff:127.0.0.1]:${port}/admin`, /its host is ::ffff:7f00:1, a loopback address/],
      [`https://10.0.0.1/admin`, /its host is 10\.0\.0\.1, a private address/],
      [`https://169.254.169.254/latest/meta-data/`, /its host is 169\.254\.169\.254, a link-local address/],
      [`https://[fd00::1]/admin`, /its host is fd00::1, an unique-local address/],
      [`https://localhost:${port}/admin`, /it resolves to (127\.0\.0\.1|::1), a loopback address/],
    ];
    for (const [url, rule] of cases) {
      const error = await failure(model(current().origin), url);
      expect(error.message).toContain(`refused to download ${JSON.stringify(url)}: `);
      expect(error.message).toMatch(rule);
      expect((error as { retryable?: boolean }).retryable).toBe(false);
    }
    expect(current().requests).toStrictEqual([]);
  });

  check("downloads a URL part on a loopback address that downloadParts.allow accepts", async () => {
    fresh();
    const seen: string[] = [];
    current().enqueue({ headers: { "content-type": "application/pdf" }, body: pdf }, answer());
    const url = `${current().origin}/admin/export`;
    await agentLoop(
      model(current().origin, { allow: (asked: string) => (seen.push(asked), asked.startsWith(current().origin)) }),
      [],
      fileSession(url),
    );
    expect(seen).toStrictEqual([url]);
    expect(current().requests.map((request) => `${request.method} ${request.url}`)[0]).toBe("GET /admin/export");
    expect(current().requests).toHaveLength(2);
  });

  check("refuses a redirect from an allowed URL to one downloadParts.allow does not accept", async () => {
    fresh();
    const start = `${current().origin}/public/doc.pdf`;
    current().enqueue({ status: 302, headers: { location: "/admin/export" }, body: "" });
    const error = await failure(model(current().origin, { allow: (asked: string) => asked === start }), start);
    expect(error.message).toContain(
      `refused to download ${JSON.stringify(start)}: it redirects to ${JSON.stringify(`${current().origin}/admin/export`)}: downloadParts.allow refused it`,
    );
    expect(current().requests.map((request) => request.url)).toStrictEqual(["/public/doc.pdf"]);
  });

  check("refuses a part past downloadParts.maxBytes, naming the URL and the cap", async () => {
    fresh();
    current().enqueue({ headers: { "content-type": "application/pdf" }, chunks: [pdf, pdf, pdf] });
    const url = `${current().origin}/big.pdf`;
    const error = await failure(model(current().origin, { allow: () => true, maxBytes: 20 }), url);
    expect(error.message).toMatch(/could not download ".*\/big\.pdf" \(more than downloadParts\.maxBytes 20 bytes\)/);
    expect(current().requests).toHaveLength(1);
  });

  check("gives up on a download past downloadParts.timeoutMs with a retryable error", async () => {
    fresh();
    current().enqueue({ stallBeforeHeaders: true });
    const url = `${current().origin}/slow.pdf`;
    const invoke = model(current().origin, { allow: () => true, timeoutMs: 300 });
    // Called once, outside the loop, which would repeat a retryable failure.
    const events = invoke([], fileSession(url), { signal: new AbortController().signal, iteration: 1 });
    const iterator = (events as AsyncIterable<unknown>)[Symbol.asyncIterator]();
    const error: unknown = await iterator.next().catch((thrown: unknown) => thrown);
    expect(isAgentError(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /could not download ".*\/slow\.pdf" \(it took longer than downloadParts\.timeoutMs 300\)/,
    );
    expect((error as { retryable?: boolean }).retryable).toBe(true);
  });

  check("refuses a downloadParts that is neither false nor its options, naming the option", async () => {
    expect(() => model("http://127.0.0.1:9", { allow: "yes" })).toThrow(/downloadParts\.allow must be a function/);
    expect(() => model("http://127.0.0.1:9", true)).toThrow(/downloadParts must be false or an object/);
    expect(() => model("http://127.0.0.1:9", { maxBytes: -1 })).toThrow(
      /downloadParts\.maxBytes must be a positive integer/,
    );
  });
}

/**
 * The rule for a URL part an adapter passes on for its provider to fetch (Anthropic, OpenAI
 * Responses, OpenAI Chat images): the provider, or a self-hosted compatible server given as
 * `baseURL`, would fetch it from inside its network, so the URL alone is checked first (https:,
 * a host that is not a non-public address or a local name) unless `downloadParts.allow` decides;
 * `downloadParts: false` passes URLs on unchecked. An adapter that downloads image URLs instead
 * holds to the download rule for the same URLs (the cases above).
 */
export function passOnCases(
  target: ConformanceTarget,
  current: () => ReplayServer,
  fresh: () => void,
  answer: () => ReplayResponse,
): void {
  const check = (title: string, test: () => Promise<void>): void => {
    if (target.fetchesImageUrls) it(title, test, 20_000);
    else
      it.skip(`${title} (skipped: the ${target.name} adapter downloads image URLs: the download rule applies)`, test);
  };
  const model = (downloadParts?: unknown): InvokeModel =>
    target.createModel(current().origin, {
      stream: true,
      apiKey: "sk-test-conformance-0123456789",
      ...(downloadParts === undefined ? {} : { downloadParts }),
    } as Parameters<ConformanceTarget["createModel"]>[1]);
  const imageSession = (url: string): ReturnType<typeof initSession> =>
    initSession("s", [
      { type: "text", text: "What is this?" },
      { type: "image", url },
    ]);

  check(
    "by default refuses to pass on an image URL to a non-public host, in every notation, before any request",
    async () => {
      fresh();
      const port = new URL(current().origin).port;
      const cases: [string, RegExp][] = [
        [`${current().origin}/admin/export.png`, /only https: URLs are passed on by default, not http:/],
        [`https://127.0.0.1:${port}/admin.png`, /its host is 127\.0\.0\.1, a loopback address/],
        [`https://2130706433:${port}/admin.png`, /its host is 127\.0\.0\.1, a loopback address/],
        [`https://0177.0.0.1/admin.png`, /its host is 127\.0\.0\.1, a loopback address/],
        [`https://0x7f.1/admin.png`, /its host is 127\.0\.0\.1, a loopback address/],
        [`https://[::1]/admin.png`, /its host is ::1, a loopback address/],
        [`https://[::ffff:127.0.0.1]/admin.png`, /its host is ::ffff:7f00:1, a loopback address/],
        [`https://10.0.0.1/admin.png`, /its host is 10\.0\.0\.1, a private address/],
        [`https://192.168.1.20/cam.png`, /its host is 192\.168\.1\.20, a private address/],
        [`https://169.254.169.254/latest/meta-data/`, /its host is 169\.254\.169\.254, a link-local address/],
        [`https://[fd00::1]/admin.png`, /its host is fd00::1, an unique-local address/],
        [`https://localhost:${port}/admin.png`, /its host "localhost" is a local name/],
        [
          `https://metadata.google.internal/computeMetadata/v1/`,
          /its host "metadata\.google\.internal" is a local name/,
        ],
        [`https://intranet/logo.png`, /its host "intranet" is a local name/],
      ];
      for (const [url, rule] of cases) {
        const error: unknown = await agentLoop(model(), [], imageSession(url)).catch((thrown: unknown) => thrown);
        expect(isAgentError(error), `${url}: ${String(error)}`).toBe(true);
        expect((error as Error).message).toContain(`refused to pass on ${JSON.stringify(url)} to the provider: `);
        expect((error as Error).message).toMatch(rule);
        expect((error as { retryable?: boolean }).retryable).toBe(false);
      }
      expect(current().requests).toStrictEqual([]);
    },
  );

  check("checks a URL in a tool result's content the same way", async () => {
    fresh();
    const url = "https://10.1.2.3/screenshot.png";
    current().enqueue(
      target.turnResponse(
        {
          toolCalls: [{ id: "call_shot", name: "shot", input: {} }],
          stopReason: "tool_use",
          usage: { input: 5, output: 3 },
        },
        true,
      ),
    );
    const shot = {
      name: "shot",
      description: "Takes a screenshot.",
      input_schema: { type: "object", properties: {} },
      handler: () => toolContent([{ type: "image", url }]),
    };
    const error: unknown = await agentLoop(model(), [shot], initSession("s", "Look.")).catch(
      (thrown: unknown) => thrown,
    );
    expect((error as Error).message).toContain(
      `refused to pass on ${JSON.stringify(url)} to the provider: its host is 10.1.2.3`,
    );
    expect(current().requests).toHaveLength(1);
  });

  check(
    "passes on a public https URL unchanged; with downloadParts.allow or downloadParts: false, as they decide",
    async () => {
      fresh();
      const local = `${current().origin}/cat.png`;
      current().enqueue(answer(), answer(), answer());
      await agentLoop(model(), [], imageSession("https://example.com/cat.png"));
      const asked: string[] = [];
      await agentLoop(model({ allow: (url: string) => (asked.push(url), true) }), [], imageSession(local));
      await agentLoop(model(false), [], imageSession(local));
      const sent = current().requests.map((request) =>
        target.contentIn(request.body).flatMap((part) => ("url" in part ? [part.url] : [])),
      );
      expect(sent).toStrictEqual([["https://example.com/cat.png"], [local], [local]]);
      expect(asked).toStrictEqual([local]);
      const refused: unknown = await agentLoop(
        model({ allow: () => false }),
        [],
        imageSession("https://example.com/a.png"),
      ).catch((thrown: unknown) => thrown);
      expect((refused as Error).message).toMatch(
        /refused to pass on "https:\/\/example\.com\/a\.png" to the provider: downloadParts\.allow refused it/,
      );
      expect(current().requests).toHaveLength(3);
    },
  );
}
