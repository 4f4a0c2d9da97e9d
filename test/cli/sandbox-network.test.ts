// --allow-host on real commands in bubblewrap: the sandbox keeps no network of its own, and a
// program that uses the proxy variables reaches an allowed host (a loopback server of the host,
// named api.localhost) and nothing else (a 403 naming --allow-host); one that ignores them has no
// network at all; the bash tool tells the model which hosts were refused. Skipped, loudly, where
// bwrap cannot run (see sandbox-support.ts).
import { createServer, type Server } from "node:http";
import { networkInterfaces } from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseAllowedHost } from "../../src/cli/sandbox/allowed-hosts.ts";
import { bashTool, runCommand } from "../../src/cli/tools/bash.ts";
import { createWorkspace } from "../../src/cli/tools/workspace.ts";
import { tempDirectory } from "./helpers.ts";
import { fakeHome, sandboxFor, support } from "./sandbox-support.ts";

let workspace: ReturnType<typeof tempDirectory>;
let home: ReturnType<typeof fakeHome>;
let server: Server;
let port: number;
let requests: string[];

beforeEach(async () => {
  workspace = tempDirectory("sandbox-net-ws-");
  home = fakeHome();
  requests = [];
  server = createServer((incoming, outgoing) => {
    requests.push(`${incoming.headers.host} ${incoming.url}`);
    outgoing.end(`hello from the host: ${incoming.url}`);
  });
  // Every address: the host's own external address is tried from the sandbox too.
  await new Promise<void>((resolve) => server.listen(0, resolve));
  port = (server.address() as { port: number }).port;
});

afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
  workspace.remove();
  home.remove();
});

const allowing = (hosts: string[]) => sandboxFor(home, { allowHosts: hosts.map(parseAllowedHost) });

const run = (command: string, hosts: string[]) =>
  runCommand(command, { cwd: workspace.path, timeoutMs: 30_000, killGraceMs: 500, sandbox: allowing(hosts) });

// Clients run with the node that runs the tests (on the read-only root the sandbox shows).
const node = JSON.stringify(process.execPath);

// A GET through $HTTP_PROXY, as curl or pip send it: the status and body, or the error.
const proxiedGet = (url: string): string =>
  `${node} -e 'const proxy = new URL(process.env.HTTP_PROXY); require("node:http").get({ host: proxy.hostname, port: proxy.port, path: process.argv[1] }, (r) => { let b = ""; r.on("data", (c) => b += c); r.on("end", () => console.log("status", r.statusCode, b)); }).on("error", (e) => console.log("error", e.code))' ${url}`;

// CONNECT host:port through $HTTPS_PROXY (as for HTTPS), then a GET in the tunnel.
const tunnelledGet = (authority: string): string =>
  `${node} -e 'const proxy = new URL(process.env.HTTPS_PROXY); const s = require("node:net").connect(proxy.port, proxy.hostname); let got = ""; s.on("data", (c) => { got += c; if (got === "HTTP/1.1 200 Connection Established\\r\\n\\r\\n") s.write("GET /tunnel HTTP/1.1\\r\\nhost: x\\r\\nconnection: close\\r\\n\\r\\n"); }); s.on("end", () => console.log("tunnel", JSON.stringify(got))); s.write("CONNECT " + process.argv[1] + " HTTP/1.1\\r\\n\\r\\n")' ${authority}`;

// A program that ignores the proxy variables: a plain TCP connection.
const directConnect = (host: string): string =>
  `${node} -e 'require("node:net").connect(${port}, process.argv[1]).on("connect", () => console.log("connected directly")).on("error", (e) => console.log("direct", process.argv[1], e.code))' ${host}`;

describe.skipIf(!support.available)("--allow-host in the sandbox", () => {
  it("reaches an allowed host through the proxy, over HTTP and in a CONNECT tunnel", async () => {
    const result = await run(
      `${proxiedGet(`http://api.localhost:${port}/plain`)}; ${tunnelledGet(`api.localhost:${port}`)}`,
      ["api.localhost"],
    );
    expect(result.exitCode, result.output).toBe(0);
    expect(result.output).toContain("status 200 hello from the host: /plain");
    expect(result.output).toContain("hello from the host: /tunnel");
    expect(requests).toStrictEqual([`api.localhost:${port} /plain`, "x /tunnel"]);
    expect(result.refusedHosts).toStrictEqual([]);
  }, 60_000);

  it("refuses another host with a 403 that names --allow-host", async () => {
    const result = await run(
      `${proxiedGet(`http://other.localhost:${port}/`)}; ${proxiedGet(`http://127.0.0.1:${port}/`)}; ${tunnelledGet(`other.localhost:${port}`)}`,
      ["api.localhost"],
    );
    expect(result.output).toContain(
      `status 403 the sandbox refused other.localhost:${port}: bash commands reach only the hosts of --allow-host (api.localhost). To allow it, run simple-agent-loop with --allow-host other.localhost`,
    );
    expect(result.output).toContain(`status 403 the sandbox refused 127.0.0.1:${port}`);
    expect(result.output).toContain("HTTP/1.1 403 Forbidden");
    expect(requests).toStrictEqual([]);
    expect(result.refusedHosts).toStrictEqual([`other.localhost:${port}`, `127.0.0.1:${port}`]);
  }, 60_000);

  it("gives a program that ignores the proxy no network at all", async () => {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((entry) => entry !== undefined && entry.family === "IPv4" && !entry.internal)?.address;
    const hosts = ["127.0.0.1", ...(external === undefined ? [] : [external])];
    const result = await run(hosts.map(directConnect).join("; "), ["api.localhost", "127.0.0.1"]);
    expect(result.output).not.toContain("connected directly");
    expect(result.output).toContain("direct 127.0.0.1 ECONNREFUSED");
    if (external !== undefined) expect(result.output).toMatch(/direct \S+ E(NETUNREACH|CONNREFUSED|HOSTUNREACH)/);
    expect(requests).toStrictEqual([]);
  }, 60_000);

  it("tells the model, in the bash tool's result and description, which hosts it reaches and which were refused", async () => {
    const tool = bashTool(createWorkspace(workspace.path), { sandbox: allowing(["api.localhost"]), killGraceMs: 500 });
    expect(tool.description).toContain("there is no network but HTTP and HTTPS to api.localhost");
    const output = await tool.handler({ command: proxiedGet(`http://other.localhost:${port}/`) }, {
      signal: new AbortController().signal,
    } as Parameters<typeof tool.handler>[1]);
    expect(String(output)).toContain(
      `[the sandbox refused network access to other.localhost:${port}: not in --allow-host; the user can allow a host with --allow-host <host>]`,
    );
  }, 60_000);
});
