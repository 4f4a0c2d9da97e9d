import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { lookup as dnsLookupAll } from "node:dns/promises";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { AgentError, errorMessage } from "../errors.ts";
import type { Fetch } from "./http.ts";
import { addressKind, describeAddress } from "./network-address.ts";

/** One URL to download on someone else's behalf, and the rules it must pass. */
export type GuardedDownload = {
  url: string;
  /** The adapter's name, first in every error. */
  adapter: string;
  /** Decides instead of the default rule, for the URL and for each redirect's target. */
  allow?: ((url: string) => boolean) | undefined;
  /** The adapter's `fetch`: used instead of a connection of our own (the addresses are then checked before it). */
  fetch?: Fetch | undefined;
  signal: AbortSignal;
  maxBytes: number;
  timeoutMs: number;
};

/** The most redirects one download follows. */
export const maxDownloadRedirects = 5;

/**
 * The bytes at `url` and their media type, fetched only where the rule lets a server go for
 * whoever wrote the URL. Without `allow`: `https:` only, and every address the host resolves to
 * must be public (see `addressKind`); the connection goes to an address that was checked (our own
 * lookup hook, a fresh connection per request, its remote address checked again once connected),
 * so a name server that answers differently the second time changes nothing. With `allow`, its
 * answer decides (still `http:` or `https:` only). Redirects are followed by hand, each target
 * checked the same way, at most `maxDownloadRedirects`. The whole download (every hop and the
 * body) has `timeoutMs`; a body past `maxBytes` is cut. A refusal is an `AgentError` naming the
 * URL and the rule, before any byte is sent there; a network failure or a timeout is a retryable
 * `AgentError`; an abort of `signal` is rethrown as is.
 */
export async function guardedDownload(download: GuardedDownload): Promise<{ mediaType: string; bytes: Uint8Array }> {
  const { adapter, signal } = download;
  const shown = JSON.stringify(download.url.slice(0, 200));
  const failed = (why: string, retryable: boolean, cause?: unknown): AgentError =>
    new AgentError(`${adapter}: could not download ${shown} (${why})`, { retryable, cause });
  const timeout = new AbortController();
  const timer = setTimeout(
    () => timeout.abort(failed(`it took longer than downloadParts.timeoutMs ${download.timeoutMs}`, true)),
    download.timeoutMs,
  );
  const both = AbortSignal.any([signal, timeout.signal]);
  try {
    let url = download.url;
    for (let hop = 0; ; hop++) {
      const target = checkedUrl(url, download, hop === 0 ? undefined : url);
      const response = await open(target, download, both);
      const location = response.status >= 300 && response.status < 400 ? response.header("location") : undefined;
      if (location !== undefined) {
        response.cancel();
        if (hop === maxDownloadRedirects)
          throw refusal(download, `it redirects more than ${maxDownloadRedirects} times`);
        url = new URL(location, target.url).href;
        continue;
      }
      if (response.status < 200 || response.status >= 300) {
        response.cancel();
        throw failed(`HTTP ${response.status}`, response.status >= 500 || response.status === 429);
      }
      const declared = Number(response.header("content-length"));
      if (Number.isFinite(declared) && declared > download.maxBytes) {
        response.cancel();
        throw failed(`${declared} bytes, more than downloadParts.maxBytes ${download.maxBytes}`, false);
      }
      const bytes = await readCapped(response, download.maxBytes, () =>
        failed(`more than downloadParts.maxBytes ${download.maxBytes} bytes`, false),
      );
      return { mediaType: response.header("content-type") ?? "application/octet-stream", bytes };
    }
  } catch (error) {
    if (signal.aborted) throw signal.reason ?? error;
    if (timeout.signal.aborted) throw timeout.signal.reason;
    if (error instanceof AgentError) throw error;
    if (error instanceof RefusedAddress) throw refusal(download, error.message);
    throw failed(errorMessage(error), true, error);
  } finally {
    clearTimeout(timer);
  }
}

type Target = { url: URL; guarded: boolean };

// The URL parsed, or why it may not be fetched. `redirect` is the target of a redirect, named in the refusal.
function checkedUrl(url: string, download: GuardedDownload, redirect: string | undefined): Target {
  const refuse = (rule: string): AgentError =>
    refusal(
      download,
      redirect === undefined ? rule : `it redirects to ${JSON.stringify(redirect.slice(0, 200))}: ${rule}`,
    );
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refuse("it is not a valid URL");
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
    throw refuse(`only http: and https: URLs are downloaded, not ${parsed.protocol}`);
  if (download.allow !== undefined) {
    if (!download.allow(parsed.href)) throw refuse("downloadParts.allow refused it");
    return { url: parsed, guarded: false };
  }
  if (parsed.protocol !== "https:")
    throw refuse("only https: URLs are downloaded by default (downloadParts.allow may accept an http: URL)");
  // The URL parser has already turned 2130706433, 0177.0.0.1 and 0x7f.1 into 127.0.0.1.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host) !== 0) {
    const kind = addressKind(host);
    if (kind !== "public") throw refuse(`its host is ${describeAddress(host, kind)}; ${publicOnly}`);
  }
  return { url: parsed, guarded: true };
}

const publicOnly = "downloads reach only public addresses unless downloadParts.allow accepts the URL";

function refusal(download: GuardedDownload, rule: string): AgentError {
  return new AgentError(
    `${download.adapter}: refused to download ${JSON.stringify(download.url.slice(0, 200))}: ${rule}`,
    { retryable: false },
  );
}

// A resolved address the rule refuses; its message is the rule, made an AgentError by the caller.
class RefusedAddress extends Error {}

type OpenResponse = {
  status: number;
  header: (name: string) => string | undefined;
  chunks: AsyncIterable<Uint8Array>;
  cancel: () => void;
};

async function open(target: Target, download: GuardedDownload, signal: AbortSignal): Promise<OpenResponse> {
  if (download.fetch !== undefined) {
    // A fetch of the caller's makes its own connections: the name is checked just before.
    if (target.guarded) await checkResolved(target.url.hostname);
    const response = await download.fetch(target.url.href, { signal, redirect: "manual" });
    return {
      status: response.status,
      header: (name) => response.headers.get(name) ?? undefined,
      chunks: response.body ?? emptyChunks(),
      cancel: () => void response.body?.cancel().catch(() => undefined),
    };
  }
  return openConnection(target, signal);
}

async function* emptyChunks(): AsyncGenerator<Uint8Array> {}

async function checkResolved(hostname: string): Promise<void> {
  const host = hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host) !== 0) return;
  const addresses = await dnsLookupAll(host, { all: true });
  const refused = addresses.find((entry) => addressKind(entry.address) !== "public");
  if (refused !== undefined) throw new RefusedAddress(resolvesTo(refused.address));
}

function resolvesTo(address: string): string {
  return `it resolves to ${describeAddress(address)}; ${publicOnly}`;
}

// A GET on a connection of its own (no pooled socket another rule opened), to an address our lookup checked.
function openConnection(target: Target, signal: AbortSignal): Promise<OpenResponse> {
  return new Promise((resolve, reject) => {
    const send = target.url.protocol === "https:" ? httpsRequest : httpRequest;
    const request = send(target.url, {
      method: "GET",
      agent: false,
      signal,
      headers: { accept: "*/*" },
      ...(target.guarded ? { lookup: checkedLookup } : {}),
    });
    request.once("socket", (socket) => {
      if (!target.guarded) return;
      socket.once("connect", () => {
        const address = socket.remoteAddress;
        if (address !== undefined && addressKind(address) !== "public")
          request.destroy(new RefusedAddress(`it connected to ${describeAddress(address)}; ${publicOnly}`));
      });
    });
    request.once("error", reject);
    request.once("response", (response: IncomingMessage) => {
      resolve({
        status: response.statusCode ?? 0,
        header: (name) => {
          const value = response.headers[name];
          return Array.isArray(value) ? value.join(", ") : value;
        },
        chunks: response,
        cancel: () => response.destroy(),
      });
    });
    request.end();
  });
}

// Resolves as the system does, then refuses the name if any address it has is not public.
const checkedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error !== null) return callback(error, "", 0);
    const refused = addresses.find((entry) => addressKind(entry.address) !== "public");
    if (refused !== undefined) return callback(new RefusedAddress(resolvesTo(refused.address)), "", 0);
    if (options.all === true)
      return (callback as unknown as (error: null, all: LookupAddress[]) => void)(null, addresses);
    const [first] = addresses;
    if (first === undefined) return callback(new Error(`${hostname} has no address`), "", 0);
    callback(null, first.address, first.family);
  });
};

async function readCapped(response: OpenResponse, maxBytes: number, tooBig: () => AgentError): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of response.chunks) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      response.cancel();
      throw tooBig();
    }
    chunks.push(chunk);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
