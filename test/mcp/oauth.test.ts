// An MCP server on 127.0.0.1 behind bearer auth and an authorization server of another origin,
// both written here: protected-resource and authorization-server metadata, dynamic registration,
// an authorize endpoint that redirects to the client's callback, a token endpoint that checks
// PKCE S256 and `resource`, and refresh. openAuthorizationUrl plays the user with fetch.
import { createHash, randomUUID } from "node:crypto";
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { connectMcp, isMcpConnectionError, memoryTokenStore, type McpConnection } from "simple-agent-loop/mcp";
import { createFixtureServer } from "./fixture-tools.ts";
import { runTool } from "./helpers.ts";

type Servers = {
  mcpUrl: string;
  /** Headers of every request the authorization server got. */
  authHeaders: IncomingHttpHeaders[];
  /** Headers of every request the MCP server got. */
  mcpHeaders: IncomingHttpHeaders[];
  grants: string[];
  authorizations: number;
  /** Access tokens the MCP server accepts; clearing it makes the server refuse them. */
  valid: Set<string>;
  /** What /authorize answers instead of a code. */
  refuseWith?: string;
  close: () => Promise<void>;
};

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of request) text += String(chunk);
  return text;
}

async function startServers(): Promise<Servers> {
  const valid = new Set<string>();
  const codes = new Map<string, { challenge: string; resource: string | null }>();
  const refreshTokens = new Set<string>();
  const state: Servers = {
    mcpUrl: "",
    authHeaders: [],
    mcpHeaders: [],
    grants: [],
    authorizations: 0,
    valid,
    close: async () => undefined,
  };
  const json = (response: ServerResponse, status: number, value: unknown): void =>
    void response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
  let issuer = "";
  const authServer = createServer((request, response) => {
    state.authHeaders.push(request.headers);
    const url = new URL(request.url ?? "/", issuer);
    void (async () => {
      if (url.pathname === "/.well-known/oauth-authorization-server")
        return json(response, 200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          registration_endpoint: `${issuer}/register`,
          response_types_supported: ["code"],
          grant_types_supported: ["authorization_code", "refresh_token"],
          code_challenge_methods_supported: ["S256"],
          token_endpoint_auth_methods_supported: ["none"],
        });
      if (url.pathname === "/register" && request.method === "POST") {
        const metadata = JSON.parse(await bodyOf(request)) as Record<string, unknown>;
        return json(response, 201, { ...metadata, client_id: `client-${randomUUID()}` });
      }
      if (url.pathname === "/authorize") {
        state.authorizations += 1;
        const target = new URL(url.searchParams.get("redirect_uri")!);
        target.searchParams.set("state", url.searchParams.get("state") ?? "");
        if (url.searchParams.get("code_challenge_method") !== "S256") state.refuseWith = "invalid_request";
        if (state.refuseWith !== undefined) target.searchParams.set("error", state.refuseWith);
        else {
          const code = randomUUID();
          codes.set(code, {
            challenge: url.searchParams.get("code_challenge") ?? "",
            resource: url.searchParams.get("resource"),
          });
          target.searchParams.set("code", code);
        }
        return void response.writeHead(302, { location: target.href }).end();
      }
      if (url.pathname === "/token" && request.method === "POST") {
        const form = new URLSearchParams(await bodyOf(request));
        const grant = form.get("grant_type") ?? "";
        state.grants.push(grant);
        if (form.get("resource") !== state.mcpUrl) return json(response, 400, { error: "invalid_target" });
        if (grant === "authorization_code") {
          const issued = codes.get(form.get("code") ?? "");
          codes.delete(form.get("code") ?? "");
          const challenge = createHash("sha256")
            .update(form.get("code_verifier") ?? "")
            .digest("base64url");
          if (issued === undefined || issued.challenge !== challenge || issued.resource !== state.mcpUrl)
            return json(response, 400, { error: "invalid_grant" });
        } else if (grant !== "refresh_token" || !refreshTokens.delete(form.get("refresh_token") ?? ""))
          return json(response, 400, { error: "invalid_grant" });
        const access = `access-${randomUUID()}`;
        const refresh = `refresh-${randomUUID()}`;
        valid.add(access);
        refreshTokens.add(refresh);
        return json(response, 200, {
          access_token: access,
          refresh_token: refresh,
          token_type: "Bearer",
          expires_in: 3600,
        });
      }
      response.writeHead(404).end();
    })();
  });
  issuer = await listen(authServer);
  let origin = "";
  const mcpServer = createServer((request, response) => {
    state.mcpHeaders.push(request.headers);
    const url = new URL(request.url ?? "/", origin);
    if (url.pathname.startsWith("/.well-known/oauth-protected-resource"))
      return json(response, 200, { resource: state.mcpUrl, authorization_servers: [issuer] });
    if (url.pathname !== "/mcp") return void response.writeHead(404).end();
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1];
    if (token === undefined || !valid.has(token))
      return void response
        .writeHead(401, {
          "www-authenticate": `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
        })
        .end();
    if (request.method !== "POST") return void response.writeHead(405, { allow: "POST" }).end();
    const transport = new StreamableHTTPServerTransport({});
    const server = createFixtureServer();
    response.on("close", () => void server.close());
    void server.connect(transport).then(() => transport.handleRequest(request, response));
  });
  origin = await listen(mcpServer);
  state.mcpUrl = `${origin}/mcp`;
  state.close = async () => {
    for (const server of [authServer, mcpServer]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  };
  return state;
}

/** Follows the authorization URL as a browser would, up to our callback, and returns its answer. */
async function playUser(url: string, options: { wrongStateFirst?: boolean } = {}): Promise<number[]> {
  const authorize = await fetch(url, { redirect: "manual" });
  const callback = new URL(authorize.headers.get("location")!);
  const statuses: number[] = [];
  if (options.wrongStateFirst === true) {
    const forged = new URL(callback);
    forged.searchParams.set("state", "not-the-state");
    statuses.push((await fetch(forged)).status);
  }
  statuses.push((await fetch(callback)).status);
  return statuses;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function servers(): Promise<Servers> {
  const started = await startServers();
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
});
