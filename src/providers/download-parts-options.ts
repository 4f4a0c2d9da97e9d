/**
 * How an adapter downloads the URL parts its provider cannot fetch itself (`downloadParts`, one
 * of the transport options every adapter takes). The server downloads such a part for whoever
 * wrote it (a page, a tool, a session file), so by default only what anyone could reach is
 * fetched: `https:` URLs whose host resolves to public addresses only (no loopback, private,
 * link-local, unique-local, unspecified, multicast or reserved address, in any notation), checked
 * on the address the connection goes to and again on every redirect. `false` downloads nothing: a
 * URL part such an adapter cannot pass on is then an `AgentError` before any request. The URL
 * parts an adapter passes on for its provider (or the server behind `baseURL`) to fetch are held
 * to the same rule as far as the URL alone tells (`https:`, no non-public address in any notation,
 * no local name such as `localhost` or `*.internal`), or to `allow`; `false` passes them on unchecked.
 */
export type DownloadPartsOptions = {
  /**
   * Decides instead of the default rule: called with each URL (normalized, as `new URL(url).href`)
   * and with each redirect's target; `true` downloads it whatever its scheme (`http:` or `https:`)
   * and address, `false` refuses it. Must not throw.
   */
  allow?: (url: string) => boolean;
  /** The most bytes one downloaded part may have (default 20 MiB); a larger one fails the call. */
  maxBytes?: number;
  /** The longest one download may take, redirects and body included, in milliseconds (default 30000). */
  timeoutMs?: number;
};

/** The default of `downloadParts.maxBytes`: above what any provider takes inline in one request. */
export const defaultMaxDownloadBytes = 20 * 1024 * 1024;

/** The default of `downloadParts.timeoutMs`. */
export const defaultDownloadTimeoutMs = 30_000;
