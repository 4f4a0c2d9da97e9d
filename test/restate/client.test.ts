import { describe, expect, it } from "vitest";
import { isRestateAgentError, restateAgentClient } from "simple-agent-loop/restate";
import { freePort } from "../helpers.ts";

// The client on its own, against a port nobody listens on and a fetch that times out the way
// Node's does (undici: "fetch failed", the reason in `cause` with its code).
const timeoutFailure = (code: string): TypeError =>
  new TypeError("fetch failed", { cause: Object.assign(new Error("Headers Timeout Error"), { code }) });

describe("restateAgentClient", () => {
  it("an unreachable server is a retryable RestateAgentError with status 0 and the reason", async () => {
    const client = restateAgentClient({ url: `http://127.0.0.1:${await freePort()}` });
    const failure = await client.status("s").catch((error: unknown) => error);
    expect(isRestateAgentError(failure)).toBe(true);
    expect(failure).toMatchObject({
      status: 0,
      retryable: true,
      message: expect.stringMatching(/^cannot reach Restate at http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/),
    });
  });

  it("run sends, then attaches again when fetch gives up waiting, until the run's result comes", async () => {
    const requests: string[] = [];
    let attaches = 0;
    const fetch = (async (url: string, init: RequestInit) => {
      requests.push(`${init.method} ${url}`);
      if (url.endsWith("/run/send")) return Response.json({ invocationId: "inv_1", status: "Accepted" });
      attaches++;
      if (attaches === 1) throw timeoutFailure("UND_ERR_HEADERS_TIMEOUT");
      if (attaches === 2) throw timeoutFailure("UND_ERR_BODY_TIMEOUT");
      return Response.json({ outcome: "done", response: "ok" });
    }) as typeof globalThis.fetch;
    const client = restateAgentClient({ url: "http://restate.test/", fetch });
    expect(await client.run("s 1", { message: "go" }, { idempotencyKey: "k" })).toStrictEqual({
      outcome: "done",
      response: "ok",
    });
    expect(requests).toStrictEqual([
      "POST http://restate.test/agent/s%201/run/send",
      ...Array.from({ length: 3 }, () => "GET http://restate.test/restate/invocation/inv_1/attach"),
    ]);
  });

  it("a refused attach and a dropped connection are not waited out", async () => {
    const refusing = restateAgentClient({
      url: "http://restate.test",
      fetch: async () => Response.json({ message: "invocation inv_9 not found" }, { status: 404 }),
    });
    await expect(refusing.attach("inv_9")).rejects.toMatchObject({
      name: "RestateAgentError",
      status: 404,
      retryable: false,
      message: "invocation inv_9 not found",
    });
    let calls = 0;
    const dropping = restateAgentClient({
      url: "http://restate.test",
      fetch: async () => {
        calls++;
        throw new TypeError("fetch failed", {
          cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }),
        });
      },
    });
    await expect(dropping.attach("inv_9")).rejects.toMatchObject({
      status: 0,
      retryable: true,
      message: "cannot reach Restate at http://restate.test: other side closed",
    });
    expect(calls).toBe(1);
  });

  it("a connection closed while a large request is sent (an import over the ingress's size limit) says so, with the size", async () => {
    const pipe = (): never => {
      throw new TypeError("fetch failed", { cause: Object.assign(new Error("write EPIPE"), { code: "EPIPE" }) });
    };
    const client = restateAgentClient({ url: "http://restate.test", fetch: async () => pipe() });
    const entries = [{ type: "message", message: { role: "user", content: "x".repeat(2 * 1024 * 1024) } }];
    const store = { loadEntries: async () => entries } as never;
    const failure = await client.importFrom("s", store).catch((error: unknown) => error);
    expect(failure).toMatchObject({ status: 0 });
    expect((failure as Error).message).toMatch(
      /^cannot reach Restate at http:\/\/restate\.test: write EPIPE \(it closed the connection while a request of \d{7} bytes was sent: more than its request size limit\?\)$/,
    );
    // A small request that fails the same way is only the reason.
    await expect(client.status("s")).rejects.toMatchObject({
      message: "cannot reach Restate at http://restate.test: write EPIPE",
    });
  });

  it("a signal stops the waiting with its reason", async () => {
    const controller = new AbortController();
    const fetch = ((_url: string, init: RequestInit) =>
      new Promise<Response>((_resolve, reject) => {
        init.signal?.addEventListener("abort", () =>
          reject(new DOMException("This operation was aborted", "AbortError")),
        );
      })) as typeof globalThis.fetch;
    const client = restateAgentClient({ url: "http://restate.test", fetch });
    const waiting = client.attach("inv_1", { signal: controller.signal });
    controller.abort(new Error("user went away"));
    await expect(waiting).rejects.toThrow("user went away");
  });
});
