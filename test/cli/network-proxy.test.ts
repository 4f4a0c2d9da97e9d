// The sandbox's network proxy on its own, through its unix socket as the forwarder in a sandbox
// reaches it: allowed names pass (HTTP requests and CONNECT tunnels), everything else gets a 403
// naming --allow-host, whatever the request dresses itself as (an IP address of an allowed name,
// a user name before the host, a spoofed Host header, another port).
import { createServer, request, type Server } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseAllowedHost } from "../../src/cli/sandbox/allowed-hosts.ts";
import { startNetworkProxy, type HostLookup, type NetworkProxy } from "../../src/cli/sandbox/network-proxy.ts";
import { tempDirectory } from "./helpers.ts";

let target: Server;
let port: number;
let directory: ReturnType<typeof tempDirectory>;
let proxy: NetworkProxy | undefined;

beforeEach(async () => {
  directory = tempDirectory("proxy-test-");
  target = createServer((incoming, outgoing) =>
    outgoing.end(`reached ${incoming.method} ${incoming.url} host=${incoming.headers.host}`),
  );
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  port = (target.address() as { port: number }).port;
});
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await new Promise((resolve) => target.close(resolve));
  directory.remove();
});

async function start(allowed: string[], lookup?: HostLookup): Promise<NetworkProxy> {
  proxy = await startNetworkProxy({
    socketPath: join(directory.path, "proxy.sock"),
    allowed: allowed.map(parseAllowedHost),
    ...(lookup === undefined ? {} : { lookup }),
  });
  return proxy;
}

// An HTTP request in absolute form, as a client configured with HTTP_PROXY sends it.
function viaProxy(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const sent = request({ socketPath: proxy!.socketPath, path: url, headers }, (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    sent.on("error", reject);
    sent.end();
  });
}

// `CONNECT authority`, then a plain GET through the tunnel when it opens: what came back, raw.
function tunnel(authority: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(proxy!.socketPath);
    let received = "";
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString();
      if (received.startsWith("HTTP/1.1 200") && received.endsWith("\r\n\r\n"))
        socket.write(`GET /tunnelled HTTP/1.1\r\nhost: ${authority}\r\nconnection: close\r\n\r\n`);
    });
    socket.on("end", () => resolve(received));
    socket.on("error", reject);
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n\r\n`);
  });
}

describe("the sandbox's network proxy", () => {
  it("passes HTTP requests and CONNECT tunnels to an allowed name, resolved by the proxy", async () => {
    await start(["api.localhost"]);
    expect(await viaProxy(`http://api.localhost:${port}/a?b=1`)).toStrictEqual({
      status: 200,
      body: `reached GET /a?b=1 host=api.localhost:${port}`,
    });
    const tunnelled = await tunnel(`api.localhost:${port}`);
    expect(tunnelled).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 200 OK/);
    expect(tunnelled).toContain(`reached GET /tunnelled host=api.localhost:${port}`);
    expect(proxy!.refused()).toStrictEqual([]);
  });

  it("refuses other hosts with a 403 that says how to allow them, and remembers them", async () => {
    await start(["api.localhost"]);
    const refused = await viaProxy(`http://other.localhost:${port}/`);
    expect(refused.status).toBe(403);
    expect(refused.body).toContain(`the sandbox refused other.localhost:${port}`);
    expect(refused.body).toContain("run simple-agent-loop with --allow-host other.localhost");
    expect(refused.body).toContain("(api.localhost)");
    const refusedTunnel = await tunnel(`other.localhost:${port}`);
    expect(refusedTunnel).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    expect(refusedTunnel).toContain("--allow-host other.localhost");
    expect(refusedTunnel).not.toContain("reached");
    expect(proxy!.refused()).toStrictEqual([`other.localhost:${port}`]);
  });

  it("decides on the name asked for: an allowed name's address, a user name, a Host header or odd IP forms do not pass", async () => {
    await start(["api.localhost"]);
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://2130706433:${port}/`,
      `http://0x7f.1:${port}/`,
      `http://api.localhost@127.0.0.1:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://api.localhost.evil.example:${port}/`,
    ]) {
      const answer = await viaProxy(url, { host: `api.localhost:${port}` });
      expect(answer.status, url).toBe(403);
      expect(answer.body, url).not.toContain("reached");
    }
    expect(await tunnel(`127.0.0.1:${port}`)).toMatch(/^HTTP\/1\.1 403/);
    expect(await tunnel(`api.localhost@127.0.0.1:${port}`)).toMatch(/^HTTP\/1\.1 400/);
    // A request meant for a server, not a proxy, names no host the proxy could check.
    expect((await viaProxy("/a", { host: `api.localhost:${port}` })).status).toBe(400);
  });

  it("keeps host:port entries to their port, *.domain to its subdomains, and lists IP addresses as themselves", async () => {
    await start([`api.localhost:${port}`, "*.svc.localhost", "127.0.0.1"]);
    expect((await viaProxy(`http://api.localhost:${port}/`)).status).toBe(200);
    expect((await viaProxy(`http://api.localhost:${port + 1}/`)).status).toBe(403);
    expect((await viaProxy(`http://a.svc.localhost:${port}/`)).status).toBe(200);
    expect((await viaProxy(`http://svc.localhost:${port}/`)).status).toBe(403);
    expect((await viaProxy(`http://127.0.0.1:${port}/`)).status).toBe(200);
  });

  it("connects to the one address it resolved, and refuses names that resolve to link-local or unspecified addresses", async () => {
    const asked: string[] = [];
    const answers: Record<string, string> = { "api.example": "127.0.0.1", "meta.example": "169.254.169.254" };
    await start(["api.example", "meta.example", "zero.example"], async (host) => {
      asked.push(host);
      return { address: answers[host] ?? "0.0.0.0", family: 4 };
    });
    expect(await viaProxy(`http://api.example:${port}/`)).toStrictEqual({
      status: 200,
      body: `reached GET / host=api.example:${port}`,
    });
    for (const host of ["meta.example", "zero.example"]) {
      const answer = await viaProxy(`http://${host}:${port}/`);
      expect(answer.status).toBe(403);
      expect(answer.body).toContain("link-local or unspecified");
    }
    expect(asked).toStrictEqual(["api.example", "meta.example", "zero.example"]);
  });
});

describe("parseAllowedHost", () => {
  it("reads names, *.domain, IP addresses and ports, canonically", () => {
    expect(parseAllowedHost("Registry.NPMJS.org.")).toStrictEqual({
      host: "registry.npmjs.org",
      subdomains: false,
      port: undefined,
    });
    expect(parseAllowedHost("*.github.com")).toStrictEqual({ host: "github.com", subdomains: true, port: undefined });
    expect(parseAllowedHost("10.0.0.5:8080")).toStrictEqual({ host: "10.0.0.5", subdomains: false, port: 8080 });
    expect(parseAllowedHost("[::1]:80")).toStrictEqual({ host: "::1", subdomains: false, port: 80 });
  });

  it("refuses URLs, user names, paths, wildcards elsewhere and bad ports", () => {
    for (const text of [
      "https://example.com",
      "user@example.com",
      "example.com/x",
      "*",
      "a.*.com",
      "x:0",
      "x:70000",
      "",
    ])
      expect(() => parseAllowedHost(text), text).toThrow(/--allow-host takes a host name/);
  });
});
