import { lookup as dnsLookup } from "node:dns/promises";
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, isIP, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { addressKind } from "../../providers/network-address.ts";
import { describeAllowedHost, hostAuthority, isHostAllowed, type AllowedHost } from "./allowed-hosts.ts";

/** A running `startNetworkProxy`: where it listens, what it refused so far, and how to stop it. */
export type NetworkProxy = {
  socketPath: string;
  /** `host:port` of each connection refused, in order, each once. */
  refused: () => string[];
  /** Stops listening and ends every connection still open. */
  close: () => Promise<void>;
};

/** Resolves a host name to the one address the proxy connects to. */
export type HostLookup = (host: string) => Promise<{ address: string; family: number }>;

/**
 * An HTTP proxy on the unix socket `socketPath` that lets a sandboxed command reach the hosts of
 * `allowed` and nothing else: `CONNECT host:port` (HTTPS, and any protocol a client tunnels) and
 * plain HTTP requests in absolute form (`GET http://host/path`). Whether a host is allowed is
 * decided on the name the client asked for, never on an address: an IP address passes only when
 * the list names that address. The proxy resolves an allowed name itself (`lookup`, default the
 * system's; `localhost` and `*.localhost` are the loopback address, as RFC 6761 has them) and
 * connects to the address it got, so no later answer of the name server changes where the
 * connection goes; a name that resolves to a link-local or unspecified address (the cloud
 * metadata service at 169.254.169.254, `0.0.0.0`) is refused unless listed as that address.
 * Anything else gets `403 Forbidden` with a text naming `--allow-host`.
 */
export async function startNetworkProxy(options: {
  socketPath: string;
  allowed: readonly AllowedHost[];
  lookup?: HostLookup;
}): Promise<NetworkProxy> {
  const { allowed } = options;
  const lookup = options.lookup ?? systemLookup;
  const refused = new Set<string>();
  const open = new Set<Duplex>();
  const track = (socket: Duplex): void => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  };
  // The address to connect to, or why not.
  const destination = async (
    host: string,
    port: number,
  ): Promise<{ address: string } | { status: number; text: string }> => {
    const shown = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
    if (!isHostAllowed(allowed, host, port)) {
      refused.add(shown);
      return { status: 403, text: refusal(shown, host, allowed) };
    }
    if (isIP(host) !== 0) return { address: host };
    try {
      const { address } = await lookup(host);
      if (isLinkLocalOrUnspecified(address)) {
        refused.add(shown);
        return {
          status: 403,
          text: `the sandbox's proxy refused ${shown}: it resolves to ${address}, a link-local or unspecified address (allow that address itself with --allow-host to reach it)\n`,
        };
      }
      return { address };
    } catch (error) {
      return { status: 502, text: `the sandbox's proxy could not resolve ${host}: ${(error as Error).message}\n` };
    }
  };

  const server = createServer((incoming, outgoing) => void forward(incoming, outgoing, destination));
  server.on("connect", (incoming: IncomingMessage, client: Duplex, head: Buffer) => {
    track(client);
    void tunnel(incoming, client, head, destination, track);
  });
  server.on("connection", track);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    socketPath: options.socketPath,
    refused: () => [...refused],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
      }),
  };
}

type Destination = (host: string, port: number) => Promise<{ address: string } | { status: number; text: string }>;

// `CONNECT host:port`: a tunnel to the address the allowed name resolved to.
async function tunnel(
  incoming: IncomingMessage,
  client: Duplex,
  head: Buffer,
  destination: Destination,
  track: (socket: Duplex) => void,
): Promise<void> {
  client.on("error", () => client.destroy());
  const authority = hostAuthority(incoming.url ?? "");
  if (authority === undefined || authority.port === undefined) {
    answerRaw(client, 400, "the sandbox's proxy takes CONNECT host:port\n");
    return;
  }
  const target = await destination(authority.host, authority.port);
  if ("status" in target) {
    answerRaw(client, target.status, target.text);
    return;
  }
  const upstream: Socket = connect({ host: target.address, port: authority.port });
  track(upstream);
  upstream.once("connect", () => {
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.once("error", (error) => {
    if (upstream.connecting) answerRaw(client, 502, `the sandbox's proxy could not connect: ${error.message}\n`);
    else client.destroy();
  });
  client.once("close", () => upstream.destroy());
}

// `GET http://host/path`: the request, passed on to the address the allowed name resolved to.
async function forward(incoming: IncomingMessage, outgoing: ServerResponse, destination: Destination): Promise<void> {
  let url: URL | undefined;
  try {
    url = new URL(incoming.url ?? "");
  } catch {
    url = undefined;
  }
  const authority = url?.protocol === "http:" ? hostAuthority(url.host) : undefined;
  if (url === undefined || authority === undefined) {
    answer(outgoing, 400, "the sandbox's proxy takes http://host/path requests and CONNECT host:port\n");
    return;
  }
  const port = authority.port ?? 80;
  const target = await destination(authority.host, port);
  if ("status" in target) {
    answer(outgoing, target.status, target.text);
    return;
  }
  const upstream = request({
    host: target.address,
    port,
    method: incoming.method,
    path: `${url.pathname}${url.search}`,
    headers: { ...endToEnd(incoming.headers), host: url.host },
    setHost: false,
  });
  upstream.on("response", (response) => {
    outgoing.writeHead(response.statusCode ?? 502, endToEnd(response.headers));
    response.pipe(outgoing);
  });
  upstream.on("error", (error) => {
    if (!outgoing.headersSent) answer(outgoing, 502, `the sandbox's proxy could not connect: ${error.message}\n`);
    else outgoing.destroy();
  });
  incoming.pipe(upstream);
}

function refusal(shown: string, host: string, allowed: readonly AllowedHost[]): string {
  const list = allowed.length === 0 ? "none" : allowed.map(describeAllowedHost).join(", ");
  return `the sandbox refused ${shown}: bash commands reach only the hosts of --allow-host (${list}). To allow it, run simple-agent-loop with --allow-host ${isIP(host) === 6 ? `[${host}]` : host} (or --allow-network for every host)\n`;
}

// Headers that concern one connection, not the request: never passed on.
const hopByHop = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const kept: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (!hopByHop.has(name)) kept[name] = value;
  return kept;
}

function answer(outgoing: ServerResponse, status: number, text: string): void {
  outgoing.writeHead(status, {
    "content-type": "text/plain; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  outgoing.end(text);
}

function answerRaw(client: Duplex, status: number, text: string): void {
  const reason = status === 403 ? "Forbidden" : status === 400 ? "Bad Request" : "Bad Gateway";
  client.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
  );
}

async function systemLookup(host: string): Promise<{ address: string; family: number }> {
  if (host === "localhost" || host.endsWith(".localhost")) return { address: "127.0.0.1", family: 4 };
  return dnsLookup(host);
}

function isLinkLocalOrUnspecified(address: string): boolean {
  const kind = addressKind(address);
  return kind === "link-local" || kind === "unspecified";
}
