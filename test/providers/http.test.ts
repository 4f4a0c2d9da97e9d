import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isProviderError } from "simple-agent-loop";
import { postJson, type PostOptions } from "../../src/providers/http.ts";
import { bounded } from "../../src/providers/provider-error.ts";
import { startReplayServer, type ReplayServer } from "./replay-server.ts";

describe("providers/http", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });
  const options = (): PostOptions => ({
    provider: "test",
    url: `${server.origin}/v1/call`,
    headers: {},
    body: {},
    fetch: undefined,
    signal: new AbortController().signal,
    errors: { describe: () => ({}) },
    expect: "sse",
  });

  it("fails a body that grows past maxBodyBytes, and closes the connection", async () => {
    server.reset();
    server.enqueue({
      headers: { "content-type": "text/event-stream" },
      chunks: Array.from({ length: 64 }, () => "x".repeat(64 * 1024)),
      hang: true,
    });
    const response = await postJson({ ...options(), maxBodyBytes: 1024 * 1024 });
    const error = await response.text().catch((thrown: unknown) => thrown);
    expect(isProviderError(error)).toBe(true);
    expect(error).toMatchObject({
      provider: "test",
      retryable: false,
      message: expect.stringContaining("maxBodyBytes"),
    });
    await expect.poll(() => server.requests[0]?.clientClosed, { timeout: 5000 }).toBe(true);
  });

  it("does not use the answer of a fetch function that followed a redirect to another origin itself, and says so", async () => {
    server.reset();
    const elsewhere = await startReplayServer();
    try {
      elsewhere.enqueue({ headers: { "content-type": "text/event-stream" }, body: "data: {}\n\n" });
      server.enqueue({ status: 307, headers: { location: `${elsewhere.origin}/v1/call` } });
      const following = (url: string, init: RequestInit): Promise<Response> =>
        fetch(url, { ...init, redirect: "follow" });
      const error = await postJson({ ...options(), fetch: following }).catch((thrown: unknown) => thrown);
      expect(error).toMatchObject({
        provider: "test",
        retryable: false,
        message: expect.stringContaining(`another origin, ${elsewhere.origin}`),
      });
    } finally {
      await elsewhere.close();
    }
  });

  it("bounds a message and masks every secret, whole or any piece of 8 characters or more", () => {
    const secret = "sk-live-9f8e7d6c5b4a3210";
    expect(bounded(`key ${secret} and again ${secret}`, [secret])).toBe("key *** and again ***");
    expect(bounded(`cut: "${secret.slice(0, 11)}"... and "${secret.slice(9, 20)}"`, [secret])).toBe(
      'cut: "***"... and "***"',
    );
    // Short pieces (a common prefix) stay: they say nothing about the key.
    expect(bounded("sk-live is the prefix", [secret])).toBe("sk-live is the prefix");
    const long = bounded(`${"y".repeat(5000)}${secret}`, [secret]);
    expect(long).toBe(`${"y".repeat(1000)}… (4003 more characters)`);
  });
});
