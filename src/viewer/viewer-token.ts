import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/**
 * How a request proved it holds the viewer's token: `query` (the `token` URL parameter: the URL the
 * viewer printed, or a script), `cookie` (the cookie a page got on its first visit), or `none` (refused).
 */
export type TokenProof = "query" | "cookie" | "none";

/**
 * Checks requests for the viewer's per-run secret. Any local user can connect to a loopback port,
 * so the port alone protects nothing: a request must carry the token in its `token` parameter or
 * in the cookie `cookieHeader` sets. Tokens are compared in constant time.
 */
export type TokenCheck = {
  prove: (request: IncomingMessage) => TokenProof;
  /**
   * The `Set-Cookie` value that keeps the token for the page's later requests: HttpOnly (no script
   * reads it), SameSite=Strict (no other site's page sends it). Named after the port the request
   * came in on: cookies do not tell ports apart, and two viewers must not overwrite each other's.
   */
  cookieHeader: (request: IncomingMessage) => string;
};

export function createTokenCheck(token: string): TokenCheck {
  const expected = digest(token);
  const matches = (given: string | undefined): boolean =>
    given !== undefined && timingSafeEqual(digest(given), expected);
  return {
    prove: (request) => {
      const query = new URL(request.url ?? "/", "http://viewer.invalid").searchParams.get("token") ?? undefined;
      if (matches(query)) return "query";
      return matches(cookieValue(request.headers.cookie, cookieName(request))) ? "cookie" : "none";
    },
    cookieHeader: (request) => `${cookieName(request)}=${token}; Path=/; HttpOnly; SameSite=Strict`,
  };
}

/** A fresh token: 32 random bytes, URL-safe. */
export function newViewerToken(): string {
  return randomBytes(32).toString("base64url");
}

/** A token given by the caller must be hard to guess and safe in a URL and a cookie as is. */
export function isValidViewerToken(token: string): boolean {
  return /^[A-Za-z0-9_-]{16,256}$/.test(token);
}

// Hashing first makes both sides the same length, which timingSafeEqual needs, and hides the length.
function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

function cookieName(request: IncomingMessage): string {
  return `simple-agent-loop-viewer-${request.socket.localPort ?? 0}`;
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(";")) {
    const equals = pair.indexOf("=");
    if (equals !== -1 && pair.slice(0, equals).trim() === name) return pair.slice(equals + 1).trim();
  }
  return undefined;
}
