// A real restate-server (the devDependency's binary) on loopback ports, with its own temporary
// base directory, tuned for tests: fast retries, few partitions, little memory.
import * as restate from "@restatedev/restate-sdk";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { arch, platform, tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../helpers.ts";

export type RestateServer = {
  ingressUrl: string;
  adminUrl: string;
  /** Registers (or re-registers) a deployment at `uri`, retrying until the server reaches it. */
  register: (uri: string) => Promise<void>;
  /** SIGKILLs the server (if running) and starts it again on the same directory and ports. */
  restart: () => Promise<void>;
  /** SIGKILLs the server and removes its directory. */
  stop: () => Promise<void>;
  /** Resident memory of the server process, in bytes (Linux). */
  memory: () => number;
  /** The server's recent log output (warnings and errors), for diagnosing a failure. */
  log: () => string;
  /** Rows of an SQL query on the server's introspection tables (`sys_invocation`, `state`…). */
  query: (sql: string) => Promise<Record<string, unknown>[]>;
};

const binary = createRequire(import.meta.url).resolve(
  `@restatedev/restate-server-${platform()}-${arch()}/bin/restate-server`,
);

export async function startRestateServer(options: { streamsPerConnection?: number } = {}): Promise<RestateServer> {
  const base = mkdtempSync(join(tmpdir(), "simple-agent-loop-restate-"));
  const [ingress, admin, node] = [await freePort(), await freePort(), await freePort()];
  const config = join(base, "restate.toml");
  writeFileSync(
    config,
    [
      'cluster-name = "test"',
      'node-name = "n1"',
      "default-num-partitions = 2",
      'rocksdb-total-memory-size = "256 MiB"',
      `bind-address = "127.0.0.1:${node}"`,
      `advertised-address = "http://127.0.0.1:${node}/"`,
      "disable-telemetry = true",
      'log-filter = "warn"',
      "[default-retry-policy]",
      'initial-interval = "50ms"',
      'max-interval = "500ms"',
      "max-attempts = 1000",
      "[worker.invoker]",
      'inactivity-timeout = "30s"',
      ...(options.streamsPerConnection === undefined
        ? []
        : [`http2-streams-per-connection-limit = ${options.streamsPerConnection}`]),
      "[admin]",
      `bind-address = "127.0.0.1:${admin}"`,
      "disable-web-ui = true",
      "[ingress]",
      `bind-address = "127.0.0.1:${ingress}"`,
      "",
    ].join("\n"),
  );
  const ingressUrl = `http://127.0.0.1:${ingress}`;
  const adminUrl = `http://127.0.0.1:${admin}`;
  let child: ChildProcess | undefined;
  let log = "";
  const launch = async (): Promise<void> => {
    const started = spawn(
      binary,
      ["--no-logo", "--listen-mode", "tcp", "--base-dir", join(base, "data"), "--config-file", config],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    child = started;
    started.stdout.setEncoding("utf8").on("data", (chunk: string) => (log = (log + chunk).slice(-20_000)));
    started.stderr.setEncoding("utf8").on("data", (chunk: string) => (log = (log + chunk).slice(-20_000)));
    await waitFor(
      async () => (await ok(`${adminUrl}/health`)) && (await ok(`${ingressUrl}/restate/health`)),
      60_000,
      () => `restate-server did not start:\n${log}`,
    );
  };
  const kill = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill("SIGKILL");
    await exited;
  };
  await launch();
  return {
    ingressUrl,
    adminUrl,
    register: async (uri) => {
      await waitFor(
        async () => {
          const reply = await fetch(`${adminUrl}/deployments`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ uri, force: true }),
          }).catch(() => undefined);
          return reply?.ok === true;
        },
        30_000,
        () => `could not register ${uri}:\n${log}`,
      );
    },
    restart: async () => {
      await kill();
      await launch();
    },
    stop: async () => {
      await kill();
      rmSync(base, { recursive: true, force: true });
    },
    memory: () => residentBytes(child?.pid),
    log: () => log,
    query: async (sql) => {
      const reply = await fetch(`${adminUrl}/query`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ query: sql }),
      });
      if (!reply.ok) throw new Error(`query failed (${reply.status}): ${await reply.text()}`);
      return ((await reply.json()) as { rows: Record<string, unknown>[] }).rows;
    },
  };
}

/** Polls `check` until it is true, or throws `message()` after `timeoutMs`. */
export async function waitFor(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  message: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(message());
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function ok(url: string): Promise<boolean> {
  const reply = await fetch(url).catch(() => undefined);
  return reply?.ok === true;
}

function residentBytes(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const match = /VmRSS:\s+(\d+) kB/.exec(status);
    return match === null ? 0 : Number(match[1]) * 1024;
  } catch {
    return 0;
  }
}

/**
 * A worker endpoint in this process serving `services` (e.g. `restateAgent(...)` definitions),
 * registered with `server`; resolves with its `close`.
 */
export async function serveInProcess(
  server: RestateServer,
  services: readonly Parameters<ReturnType<typeof restate.endpoint>["bind"]>[0][],
): Promise<() => Promise<void>> {
  const http2 = await import("node:http2");
  const endpoint = restate.endpoint().setLogger(() => undefined);
  for (const service of services) endpoint.bind(service);
  const listener = http2.createServer(endpoint.http2Handler());
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  await server.register(`http://127.0.0.1:${(listener.address() as { port: number }).port}`);
  return () => new Promise<void>((resolve) => listener.close(() => resolve()));
}
