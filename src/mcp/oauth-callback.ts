import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";

/**
 * The redirect listener of one sign-in: `http://127.0.0.1:<port>/callback` (an IP literal, never
 * `localhost`, which may resolve elsewhere). It lives only while the flow runs: `close` ends it however
 * the flow ends.
 */
export type OAuthCallback = {
  redirectUrl: string;
  /** The `state` the authorization request carries: 128 random bits. */
  state: string;
  /** Resolves the `code` of the first redirect with the right `state`; rejects on `error=`. */
  code: Promise<string>;
  close: () => Promise<void>;
};

/**
 * Starts the listener. A redirect whose `state` is not ours gets a 400 and the listener keeps
 * waiting (a page of another origin cannot end the flow); `error=…` rejects `code` with the
 * authorization server's error code (its description is the server's text, kept out).
 */
export async function listenForCallback(port: number): Promise<OAuthCallback> {
  const state = randomBytes(16).toString("base64url");
  let settle: { resolve: (code: string) => void; reject: (error: Error) => void } | undefined;
  const code = new Promise<string>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // Nobody may await it when the flow fails before the redirect.
  code.catch(() => undefined);
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (request.method !== "GET" || url.pathname !== "/callback") {
      response.writeHead(404).end();
      return;
    }
    if (url.searchParams.get("state") !== state) {
      response.writeHead(400, { "content-type": "text/plain" }).end("Unknown sign-in request.\n");
      return;
    }
    const error = url.searchParams.get("error");
    const given = url.searchParams.get("code");
    if (error !== null || given === null) {
      response.writeHead(400, { "content-type": "text/plain" }).end("Sign-in failed. You can close this page.\n");
      settle?.reject(new Error(`the authorization server answered error=${safeCode(error ?? "no code")}`));
      return;
    }
    response.writeHead(200, { "content-type": "text/plain" }).end("Signed in. You can close this page.\n");
    settle?.resolve(given);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const { port: bound } = server.address() as { port: number };
  let closing: Promise<void> | undefined;
  return {
    redirectUrl: `http://127.0.0.1:${bound}/callback`,
    state,
    code,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

// An OAuth error code is a short token; anything else is cut to that shape (it is the server's text).
function safeCode(value: string): string {
  return value.replace(/[^\w.-]/g, "?").slice(0, 64);
}
