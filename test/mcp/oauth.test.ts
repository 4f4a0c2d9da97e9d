// connectMcp's oauth against an MCP server behind bearer auth and an authorization server of
// another origin, both written in ./oauth-servers.ts (PKCE S256, `resource`, the client, refresh
// checked there). openAuthorizationUrl plays the user with fetch.
import { createServer } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { agentStream, initSession, type AgentEvent } from "simple-agent-loop";
import { connectMcp, isMcpConnectionError, memoryTokenStore, type McpConnection } from "simple-agent-loop/mcp";
import { scriptedModel } from "simple-agent-loop/testing";
import { runTool } from "./helpers.ts";
import { playUser, startOAuthServers, type OAuthServers, type OAuthServersOptions } from "./oauth-servers.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function servers(options?: OAuthServersOptions): Promise<OAuthServers> {
  const started = await startOAuthServers(options);
  cleanups.push(started.close);
  return started;
}

function keep(connection: McpConnection): McpConnection {
  cleanups.push(() => connection.close());
  return connection;
}

describe("OAuth 2.1 for HTTP servers (connectMcp's oauth)", () => {
  it("signs in on the first connect, connects from the store without the browser the second time, keeps headers on the server's origin", async () => {
    const fixture = await servers();
    const store = memoryTokenStore();
    const opened: string[] = [];
    const callbackAnswers: number[][] = [];
    const config = { remote: { url: fixture.mcpUrl, headers: { "x-team": "team-secret" } } };
    let started = performance.now();
    const first = keep(
      await connectMcp(config, {
        oauth: {
          store,
          openAuthorizationUrl: async (url, server) => {
            opened.push(server);
            const authorization = new URL(url);
            expect(authorization.searchParams.get("code_challenge_method")).toBe("S256");
            expect(Buffer.from(authorization.searchParams.get("state")!, "base64url").length).toBeGreaterThanOrEqual(
              16,
            );
            expect(authorization.searchParams.get("resource")).toBe(fixture.mcpUrl);
            expect(authorization.searchParams.get("redirect_uri")).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
            callbackAnswers.push(await playUser(url, { wrongStateFirst: true }));
          },
        },
      }),
    );
    const withFlow = performance.now() - started;
    expect(opened).toStrictEqual(["remote"]);
    // The forged state was refused and the listener kept waiting for the right one.
    expect(callbackAnswers).toStrictEqual([[400, 200]]);
    expect(await runTool(first.tools, "echo", { text: "hi" })).toMatchObject({ output: "echo: hi" });
    expect(fixture.grants).toStrictEqual(["authorization_code"]);
    const record = await store.get(fixture.mcpUrl);
    expect(record?.tokens?.access_token).toMatch(/^access-/);
    expect(record?.client?.client_id).toMatch(/^client-/);
    await first.close();

    started = performance.now();
    const second = keep(
      await connectMcp(config, {
        oauth: { store, openAuthorizationUrl: () => void opened.push("again") },
      }),
    );
    const fromStore = performance.now() - started;
    expect(opened).toStrictEqual(["remote"]);
    expect(fixture.authorizations).toBe(1);
    expect(await runTool(second.tools, "echo", { text: "again" })).toMatchObject({ output: "echo: again" });
    // The entry's headers reached the MCP server and never the authorization server.
    expect(fixture.mcpHeaders.some((headers) => headers["x-team"] === "team-secret")).toBe(true);
    expect(fixture.authHeaders.length).toBeGreaterThan(0);
    expect(fixture.authHeaders.every((headers) => headers["x-team"] === undefined)).toBe(true);
    expect(fixture.authHeaders.every((headers) => headers.authorization === undefined)).toBe(true);
    console.info(`connect with sign-in: ${withFlow.toFixed(0)} ms, from stored tokens: ${fromStore.toFixed(0)} ms`);
  });

  it("refreshes a refused access token once, without the browser, and updates the store", async () => {
    const fixture = await servers();
    const store = memoryTokenStore();
    const oauth = { store, openAuthorizationUrl: async (url: string) => void (await playUser(url)) };
    await (await connectMcp({ remote: { url: fixture.mcpUrl } }, { oauth })).close();
    const before = (await store.get(fixture.mcpUrl))?.tokens?.access_token;
    fixture.valid.clear();
    const connection = keep(await connectMcp({ remote: { url: fixture.mcpUrl } }, { oauth }));
    expect(fixture.grants).toStrictEqual(["authorization_code", "refresh_token"]);
    expect(fixture.authorizations).toBe(1);
    const after = (await store.get(fixture.mcpUrl))?.tokens?.access_token;
    expect(after).not.toBe(before);
    expect(await runTool(connection.tools, "echo", { text: "x" })).toMatchObject({ output: "echo: x" });
  });

  it("fails with McpConnectionError naming the server and the error when the redirect carries error=, and closes the listener", async () => {
    const fixture = await servers();
    fixture.refuseWith = "access_denied";
    let redirect = "";
    const failure = await connectMcp(
      { remote: { url: fixture.mcpUrl } },
      {
        oauth: {
          openAuthorizationUrl: async (url) => {
            redirect = new URL(url).searchParams.get("redirect_uri")!;
            await playUser(url);
          },
        },
      },
    ).catch((error: unknown) => error);
    expect(isMcpConnectionError(failure)).toBe(true);
    expect((failure as Error).message).toMatch(/"remote".*access_denied/);
    await expect(fetch(redirect)).rejects.toThrow();
  });

  it("fails when no answer comes within timeoutMs, and at once without openAuthorizationUrl", async () => {
    const fixture = await servers();
    const failure = await connectMcp(
      { remote: { url: fixture.mcpUrl } },
      { oauth: { timeoutMs: 300, openAuthorizationUrl: () => undefined } },
    ).catch((error: unknown) => error);
    expect(isMcpConnectionError(failure)).toBe(true);
    expect((failure as Error).message).toMatch(/"remote".*not finished within 300 ms/);

    const started = performance.now();
    const needsUser = await connectMcp({ remote: { url: fixture.mcpUrl } }, { oauth: {} }).catch(
      (error: unknown) => error,
    );
    expect(isMcpConnectionError(needsUser)).toBe(true);
    expect((needsUser as Error).message).toMatch(/"remote".*openAuthorizationUrl/);
    expect(performance.now() - started).toBeLessThan(30_000);
  });

  it("listens on redirectPort when it is given, and closes it after the flow", async () => {
    const fixture = await servers();
    const port = await freePort();
    const redirects: string[] = [];
    keep(
      await connectMcp(
        { remote: { url: fixture.mcpUrl } },
        {
          oauth: {
            redirectPort: port,
            openAuthorizationUrl: async (url) => {
              redirects.push(new URL(url).searchParams.get("redirect_uri")!);
              await playUser(url);
            },
          },
        },
      ),
    );
    expect(redirects).toStrictEqual([`http://127.0.0.1:${port}/callback`]);
    await expect(fetch(redirects[0]!)).rejects.toThrow();
  });

  it("uses a pre-registered client (auth.clientId, clientSecret, scopes) without dynamic registration", async () => {
    const fixture = await servers({ preRegistered: { clientId: "cli-client", clientSecret: "cli-secret" } });
    const store = memoryTokenStore();
    const connection = keep(
      await connectMcp(
        {
          remote: {
            url: fixture.mcpUrl,
            auth: { clientId: "cli-client", clientSecret: "cli-secret", scopes: ["read", "write"] },
          },
        },
        { oauth: { store, openAuthorizationUrl: async (url) => void (await playUser(url)) } },
      ),
    );
    expect(fixture.registrations).toBe(0);
    expect(fixture.authorizeQueries.map((query) => query.get("client_id"))).toStrictEqual(["cli-client"]);
    expect(fixture.authorizeQueries[0]!.get("scope")).toBe("read write");
    expect(fixture.grants).toStrictEqual(["authorization_code"]);
    expect(await runTool(connection.tools, "echo", { text: "hi" })).toMatchObject({ output: "echo: hi" });
    // The registration is the entry's: nothing of it is written to the store.
    expect((await store.get(fixture.mcpUrl))?.client).toBeUndefined();

    // The same server with a client it does not know: the token endpoint refuses it.
    const wrong = await connectMcp(
      { remote: { url: fixture.mcpUrl, auth: { clientId: "cli-client", clientSecret: "not-it" } } },
      { oauth: { openAuthorizationUrl: async (url) => void (await playUser(url)) } },
    ).catch((error: unknown) => error);
    expect(isMcpConnectionError(wrong)).toBe(true);
    expect((wrong as Error).message).toMatch(/"remote"/);
  });

  it("starts the sign-in again when the refresh is refused", async () => {
    const fixture = await servers();
    const store = memoryTokenStore();
    const opened: string[] = [];
    const oauth = {
      store,
      openAuthorizationUrl: async (url: string, server: string) => {
        opened.push(server);
        await playUser(url);
      },
    };
    await (await connectMcp({ remote: { url: fixture.mcpUrl } }, { oauth })).close();
    const first = (await store.get(fixture.mcpUrl))?.tokens?.access_token;
    fixture.valid.clear();
    fixture.refuseRefresh = true;
    const connection = keep(await connectMcp({ remote: { url: fixture.mcpUrl } }, { oauth }));
    expect(fixture.grants).toStrictEqual(["authorization_code", "refresh_token", "authorization_code"]);
    expect(opened).toStrictEqual(["remote", "remote"]);
    expect(fixture.authorizations).toBe(2);
    const second = (await store.get(fixture.mcpUrl))?.tokens?.access_token;
    expect(second).toMatch(/^access-/);
    expect(second).not.toBe(first);
    expect(await runTool(connection.tools, "echo", { text: "again" })).toMatchObject({ output: "echo: again" });
  });

  for (const endpoint of ["smb://attacker.example/share", "file:///etc/passwd", "ms-settings:privacy"])
    it(`a sign-in page that is not http(s) is never shown: ${endpoint}`, async () => {
      const fixture = await servers({ authorizationEndpoint: endpoint });
      const shown: string[] = [];
      const failure = await connectMcp(
        { remote: { url: fixture.mcpUrl } },
        { oauth: { openAuthorizationUrl: (url) => void shown.push(url) } },
      ).catch((error: unknown) => error);
      // An opener handed smb:// or file:// reaches out where the server says (Windows sends its credentials to an smb host).
      expect(shown).toStrictEqual([]);
      expect(isMcpConnectionError(failure)).toBe(true);
      expect((failure as Error).message).toMatch(/"remote".*sign-in page.*not an http\(s\) address/);
    });

  it("a throwing openAuthorizationUrl fails the connection at once with its reason", async () => {
    const fixture = await servers();
    const started = performance.now();
    const failure = await connectMcp(
      { remote: { url: fixture.mcpUrl } },
      {
        oauth: {
          openAuthorizationUrl: () => {
            throw new Error("no browser here: sign in first");
          },
        },
      },
    ).catch((error: unknown) => error);
    expect(isMcpConnectionError(failure)).toBe(true);
    expect((failure as Error).message).toMatch(/"remote".*no browser here: sign in first/);
    // Not the sign-in's 300 s wait for a redirect that cannot come.
    expect(performance.now() - started).toBeLessThan(60_000);
  });

  it("no token, code or verifier appears in an error, an event, a tool result, the session or a log, whether the flow fails or succeeds", async () => {
    const fixture = await servers();
    const store = memoryTokenStore();
    const seen: string[] = [];
    const logged: unknown[][] = [];
    const methods = ["log", "info", "warn", "error", "debug"] as const;
    const spies = methods.map((method) =>
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void logged.push(args)),
    );
    try {
      const oauth = { store, openAuthorizationUrl: async (url: string) => void (await playUser(url)) };
      const connection = keep(await connectMcp({ remote: { url: fixture.mcpUrl } }, { oauth }));
      const model = scriptedModel([
        [{ type: "tool_call", id: "call-1", name: "echo", input: { text: "hello" } }],
        [{ role: "assistant", content: "done" }],
      ]);
      const run = agentStream(model, connection.tools, initSession("system", "echo hello"));
      const events: AgentEvent[] = [];
      for await (const event of run) events.push(event);
      seen.push(JSON.stringify(events), JSON.stringify(await run.result));
      await connection.close();

      // Failures after tokens were issued: a refused refresh with nobody to sign in, a refused sign-in, a late one.
      fixture.valid.clear();
      fixture.refuseRefresh = true;
      const failures = [
        await connectMcp({ remote: { url: fixture.mcpUrl } }, { oauth: { store } }).catch((error: unknown) => error),
        await connectMcp(
          { remote: { url: fixture.mcpUrl } },
          { oauth: { store, timeoutMs: 200, openAuthorizationUrl: () => undefined } },
        ).catch((error: unknown) => error),
      ];
      fixture.refuseWith = "access_denied";
      failures.push(await connectMcp({ remote: { url: fixture.mcpUrl } }, { oauth }).catch((error: unknown) => error));
      for (const failure of failures) {
        expect(isMcpConnectionError(failure), String(failure)).toBe(true);
        for (let error: unknown = failure; error instanceof Error; error = error.cause)
          seen.push(error.message, error.stack ?? "", JSON.stringify(error));
      }
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    seen.push(...logged.map((args) => args.map(String).join(" ")));
    const secrets = fixture.secrets.filter((secret) => secret.length >= 16);
    expect(secrets.length).toBeGreaterThanOrEqual(4);
    const leaks = secrets.filter((secret) => seen.some((text) => text.includes(secret)));
    expect(leaks).toStrictEqual([]);
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
