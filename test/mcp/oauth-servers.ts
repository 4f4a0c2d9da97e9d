// An MCP server on 127.0.0.1 behind bearer auth and an authorization server of another origin,
// both written here: protected-resource and authorization-server metadata, dynamic registration,
// an authorize endpoint that redirects to the client's callback, a token endpoint that checks
// PKCE S256, the client and `resource`, and refresh. `playUser` follows the sign-in URL as a
// browser would. Used by the library's OAuth tests and the CLI's (`mcp login`).
import { createHash, randomUUID } from "node:crypto";
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createFixtureServer } from "./fixture-tools.ts";

export type OAuthServers = {
  mcpUrl: string;
  /** Headers of every request the authorization server got. */
  authHeaders: IncomingHttpHeaders[];
  /** Headers of every request the MCP server got. */
  mcpHeaders: IncomingHttpHeaders[];
  grants: string[];
  authorizations: number;
  /** How many clients registered themselves (dynamic registration). */
  registrations: number;
  /** The query of every authorization request, in order. */
  authorizeQueries: URLSearchParams[];
  /** Access tokens the MCP server accepts; clearing it makes the server refuse them. */
  valid: Set<string>;
  /** Every secret the authorization server handed out or took: codes, verifiers, access and refresh tokens (not the challenge, which the URL shows). */
  secrets: string[];
  /** What /authorize answers instead of a code. */
  refuseWith?: string;
  /** The token endpoint refuses refresh grants (`invalid_grant`). */
  refuseRefresh?: boolean;
  close: () => Promise<void>;
};

export type OAuthServersOptions = {
  /** A client the authorization server knows without registration (no registration endpoint then). */
  preRegistered?: { clientId: string; clientSecret?: string };
  /** Makes the McpServer that answers each request (default: the fixture's). */
  create?: () => McpServer;
  /** What the authorization server's metadata names as its authorize endpoint (default: its own /authorize). */
  authorizationEndpoint?: string;
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

export async function startOAuthServers(options: OAuthServersOptions = {}): Promise<OAuthServers> {
  const valid = new Set<string>();
  const codes = new Map<string, { challenge: string; resource: string | null; clientId: string | null }>();
  const refreshTokens = new Set<string>();
  const clients = new Map<string, string | undefined>();
  if (options.preRegistered !== undefined)
    clients.set(options.preRegistered.clientId, options.preRegistered.clientSecret);
  const state: OAuthServers = {
    mcpUrl: "",
    authHeaders: [],
    mcpHeaders: [],
    grants: [],
    authorizations: 0,
    registrations: 0,
    authorizeQueries: [],
    valid,
    secrets: [],
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
          authorization_endpoint: options.authorizationEndpoint ?? `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          ...(options.preRegistered === undefined ? { registration_endpoint: `${issuer}/register` } : {}),
          response_types_supported: ["code"],
          grant_types_supported: ["authorization_code", "refresh_token"],
          code_challenge_methods_supported: ["S256"],
          token_endpoint_auth_methods_supported: ["none", "client_secret_post"],
        });
      if (url.pathname === "/register" && request.method === "POST" && options.preRegistered === undefined) {
        state.registrations += 1;
        const metadata = JSON.parse(await bodyOf(request)) as Record<string, unknown>;
        const clientId = `client-${randomUUID()}`;
        clients.set(clientId, undefined);
        return json(response, 201, { ...metadata, client_id: clientId });
      }
      if (url.pathname === "/authorize") {
        state.authorizations += 1;
        state.authorizeQueries.push(url.searchParams);
        const target = new URL(url.searchParams.get("redirect_uri")!);
        target.searchParams.set("state", url.searchParams.get("state") ?? "");
        if (url.searchParams.get("code_challenge_method") !== "S256") state.refuseWith = "invalid_request";
        if (!clients.has(url.searchParams.get("client_id") ?? "")) state.refuseWith = "unauthorized_client";
        if (state.refuseWith !== undefined) target.searchParams.set("error", state.refuseWith);
        else {
          const code = randomUUID();
          state.secrets.push(code);
          codes.set(code, {
            challenge: url.searchParams.get("code_challenge") ?? "",
            resource: url.searchParams.get("resource"),
            clientId: url.searchParams.get("client_id"),
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
        const clientId = form.get("client_id") ?? "";
        if (!clients.has(clientId) || clients.get(clientId) !== (form.get("client_secret") ?? undefined))
          return json(response, 401, { error: "invalid_client" });
        if (grant === "authorization_code") {
          const issued = codes.get(form.get("code") ?? "");
          codes.delete(form.get("code") ?? "");
          state.secrets.push(form.get("code_verifier") ?? "");
          const challenge = createHash("sha256")
            .update(form.get("code_verifier") ?? "")
            .digest("base64url");
          if (
            issued === undefined ||
            issued.challenge !== challenge ||
            issued.resource !== state.mcpUrl ||
            issued.clientId !== clientId
          )
            return json(response, 400, { error: "invalid_grant" });
        } else if (
          grant !== "refresh_token" ||
          state.refuseRefresh === true ||
          !refreshTokens.delete(form.get("refresh_token") ?? "")
        )
          return json(response, 400, { error: "invalid_grant" });
        const access = `access-${randomUUID()}`;
        const refresh = `refresh-${randomUUID()}`;
        valid.add(access);
        refreshTokens.add(refresh);
        state.secrets.push(access, refresh);
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
    const server = (options.create ?? createFixtureServer)();
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

/** Follows the authorization URL as a browser would, up to our callback, and returns its answers' statuses. */
export async function playUser(url: string, options: { wrongStateFirst?: boolean } = {}): Promise<number[]> {
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
