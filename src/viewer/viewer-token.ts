import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/**
 * How a request proved it holds the viewer's token: `header` (the `X-Viewer-Token` header the page
 * sends with each of its requests), `query` (the `token` URL parameter: a script, or an address
 * of the older form), or `none` (refused).
 */
export type TokenProof = "header" | "query" | "none";

/** The header the page sends the token in. */
export const tokenHeader = "x-viewer-token";

/**
 * Checks requests for the viewer's per-run secret. Any local user can connect to a loopback port,
 * so the port alone protects nothing: a request must carry the token in the `X-Viewer-Token`
 * header or its `token` parameter. Never in a cookie: a browser sends a host's cookies to every
 * port of that host, so any local server the owner's browser visits on 127.0.0.1 would receive it.
 * The page keeps the token in its origin's storage (which is bound to the port) and sends it
 * itself; another origin cannot send the header without a CORS preflight, which the viewer never
 * grants. Tokens are compared in constant time.
 */
export type TokenCheck = { prove: (request: IncomingMessage) => TokenProof };

export function createTokenCheck(token: string): TokenCheck {
  const expected = digest(token);
  const matches = (given: string | undefined): boolean =>
    given !== undefined && timingSafeEqual(digest(given), expected);
  return {
    prove: (request) => {
      const header = request.headers[tokenHeader];
      if (typeof header === "string" && matches(header)) return "header";
      const query = new URL(request.url ?? "/", "http://viewer.invalid").searchParams.get("token") ?? undefined;
      return matches(query) ? "query" : "none";
    },
  };
}

/** A fresh token: 32 random bytes, URL-safe. */
export function newViewerToken(): string {
  return randomBytes(32).toString("base64url");
}

/** A token given by the caller must be hard to guess and safe in a URL and a header as is. */
export function isValidViewerToken(token: string): boolean {
  return /^[A-Za-z0-9_-]{16,256}$/.test(token);
}

// Hashing first makes both sides the same length, which timingSafeEqual needs, and hides the length.
function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
