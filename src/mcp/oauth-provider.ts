import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { OAuthCallback } from "./oauth-callback.ts";
import type { McpTokenRecord, McpTokenStore } from "./token-store.ts";

/** A pre-registered OAuth client of one server (no dynamic registration then). */
export type McpServerAuth = { clientId: string; clientSecret?: string; scopes?: string[] };

/** One server's sign-in as it goes: the listener once a 401 started the flow, the URL once asked. */
export type OAuthFlow = {
  callback?: OAuthCallback;
  /** Set when the SDK asked for the user: the connection waits for the redirect, then reconnects. */
  authorizationRequested: boolean;
};

/** What `oauthProvider` needs for one server. */
export type OAuthProviderSettings = {
  server: string;
  /** The server's URL: the store's key. */
  url: string;
  store: McpTokenStore;
  auth?: McpServerAuth;
  flow: OAuthFlow;
  /** Shows the URL to the user; undefined: a server that needs the user fails at once. */
  openAuthorizationUrl?: (url: string, server: string) => void | Promise<void>;
};

/**
 * The SDK's `OAuthClientProvider` over an `McpTokenStore`: tokens, client registration and
 * discovery kept under the server's URL; the code verifier only for the flow it belongs to. The
 * SDK's `auth()` does all of OAuth (discovery, registration, PKCE S256, `resource`, refresh once,
 * restart on a refused refresh); this only keeps and hands over.
 */
export function oauthProvider(settings: OAuthProviderSettings): OAuthClientProvider {
  const { store, url, auth, flow } = settings;
  let verifier: string | undefined;
  const read = async (): Promise<McpTokenRecord> => (await store.get(url)) ?? {};
  const change = async (apply: (record: McpTokenRecord) => void): Promise<void> => {
    const record = await read();
    apply(record);
    await store.set(url, record);
  };
  return {
    get redirectUrl(): string | undefined {
      return flow.callback?.redirectUrl;
    },
    get clientMetadata(): OAuthClientMetadata {
      return {
        client_name: "simple-agent-loop",
        redirect_uris: flow.callback === undefined ? [] : [flow.callback.redirectUrl],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: auth?.clientSecret === undefined ? "none" : "client_secret_post",
        ...(auth?.scopes === undefined ? {} : { scope: auth.scopes.join(" ") }),
      };
    },
    state: () => {
      if (flow.callback === undefined) throw new Error("no redirect listener is running");
      return flow.callback.state;
    },
    clientInformation: async (): Promise<OAuthClientInformationMixed | undefined> => {
      if (auth !== undefined)
        return {
          client_id: auth.clientId,
          ...(auth.clientSecret === undefined ? {} : { client_secret: auth.clientSecret }),
        };
      return (await read()).client;
    },
    // A pre-registered client is the entry's (its secret from the config): it is not copied into the store.
    saveClientInformation: (client) =>
      auth === undefined ? change((record) => void (record.client = client)) : undefined,
    tokens: async (): Promise<OAuthTokens | undefined> => (await read()).tokens,
    saveTokens: (tokens) => change((record) => void (record.tokens = tokens)),
    redirectToAuthorization: async (authorizationUrl) => {
      if (settings.openAuthorizationUrl === undefined)
        throw new Error(
          "the server needs the user to sign in and connectMcp has no oauth.openAuthorizationUrl to show the sign-in page",
        );
      // The server's metadata names the page: an opener handed smb:// or file:// would reach out
      // where the server says (and Windows sends the user's credentials to an smb host).
      if (authorizationUrl.protocol !== "https:" && authorizationUrl.protocol !== "http:")
        throw new Error(
          `its sign-in page is not an http(s) address (${authorizationUrl.protocol.slice(0, 40)}): it is not shown`,
        );
      await settings.openAuthorizationUrl(authorizationUrl.href, settings.server);
      // Only once the URL was shown can a redirect come: an opener that throws fails the connection at once.
      flow.authorizationRequested = true;
    },
    saveCodeVerifier: (codeVerifier) => void (verifier = codeVerifier),
    codeVerifier: () => {
      if (verifier === undefined) throw new Error("no sign-in is under way");
      return verifier;
    },
    saveDiscoveryState: (discovery: OAuthDiscoveryState) => change((record) => void (record.discovery = discovery)),
    discoveryState: async (): Promise<OAuthDiscoveryState | undefined> => (await read()).discovery,
    invalidateCredentials: async (scope) => {
      if (scope === "verifier" || scope === "all") verifier = undefined;
      if (scope === "verifier") return;
      if (scope === "all") return store.delete(url);
      await change((record) => {
        if (scope === "tokens") delete record.tokens;
        if (scope === "client") delete record.client;
        if (scope === "discovery") delete record.discovery;
      });
    },
  };
}
