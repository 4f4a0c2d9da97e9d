// @ts-check
/**
 * `/assets/token.js`: the viewer's token, which every request that reads a log carries. The address
 * the viewer prints holds it in its fragment (`#token=...`), which the browser never sends. The page
 * takes it from there into its origin's storage (an origin is bound to its port, unlike a cookie,
 * which a browser sends to every port of the host) and out of the address bar, and sends it in the
 * `X-Viewer-Token` header, which a page of another origin cannot send without a CORS preflight that
 * the viewer never grants.
 */

const storageKey = "simple-agent-loop-viewer-token";

/** @type {string | null} */
let remembered = null;

/** Keeps the token of the address's fragment, if any, and takes the fragment out of the address. */
export function takeTokenFromAddress() {
  const match = /^#token=([A-Za-z0-9_-]{16,256})$/.exec(location.hash);
  if (match === null) return;
  remembered = match[1] ?? null;
  try {
    localStorage.setItem(storageKey, remembered ?? "");
  } catch {
    // Storage turned off: this page still has it; another page of the viewer needs the address again.
  }
  history.replaceState(null, "", location.pathname + location.search);
}

/**
 * The headers that carry the token (none when the page has none: the server then says how to open it).
 * @returns {Record<string, string>}
 */
export function tokenHeaders() {
  let token = remembered;
  if (token === null) {
    try {
      token = localStorage.getItem(storageKey);
    } catch {
      token = null;
    }
  }
  return token === null || token === "" ? {} : { "x-viewer-token": token };
}
