// One restate-server, a TCP proxy, and worker processes behind it, registered as one deployment:
// what a test file starts in beforeAll and stops in afterAll (even after a failure).
import { mkdtempSync, readFileSync, rmSync, existsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { restateAgentClient, type RestateAgentClient } from "simple-agent-loop/restate";
import { startRestateServer, waitFor, type RestateServer } from "./restate-server.ts";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.ts";
import { startWorker, type WorkerProcess } from "./worker-process.ts";
import { effectCounts } from "./agent-script.ts";

export type Cluster = {
  server: RestateServer;
  proxy: TcpProxy;
  workers: WorkerProcess[];
  /** The control directory of agent-script.ts (holds, releases, effects). */
  dir: string;
  client: RestateAgentClient;
  /** Starts one more worker behind the proxy. */
  addWorker: () => Promise<WorkerProcess>;
  /** SIGKILLs the worker with this pid and takes it out of the proxy. */
  killWorker: (pid: number) => Promise<void>;
  /** Holds a point (see agent-script.ts) until `release`. */
  hold: (point: string) => void;
  release: (point: string) => void;
  /** Waits until a worker is held at the point; the pid of the process holding it. */
  waitAt: (point: string) => Promise<number>;
  effects: () => Map<string, number>;
  /**
   * Waits until the server's journal of the invocation (stored, not only run by a worker) holds
   * steps whose names pass `wanted`; the names it holds then.
   */
  waitForSteps: (invocationId: string, wanted: (names: string[]) => boolean, what: string) => Promise<string[]>;
  stop: () => Promise<void>;
};

export async function startCluster(options: { workers?: number } = {}): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), "simple-agent-loop-restate-control-"));
  writeFileSync(join(dir, "effects"), "");
  const workers: WorkerProcess[] = [];
  let server: RestateServer | undefined;
  let proxy: TcpProxy | undefined;
  const stop = async (): Promise<void> => {
    await Promise.all(workers.map((worker) => worker.kill()));
    await proxy?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    server = await startRestateServer();
    for (let index = 0; index < (options.workers ?? 2); index++) workers.push(await startWorker(dir));
    proxy = await startTcpProxy(workers.map((worker) => worker.port));
    await server.register(proxy.url);
  } catch (error) {
    await stop();
    throw error;
  }
  const liveProxy = proxy;
  const liveServer = server;
  return {
    server,
    proxy,
    workers,
    dir,
    client: restateAgentClient({ url: server.ingressUrl, adminUrl: server.adminUrl }),
    addWorker: async () => {
      const worker = await startWorker(dir);
      workers.push(worker);
      liveProxy.upstreams.push(worker.port);
      return worker;
    },
    killWorker: async (pid) => {
      const worker = workers.find((candidate) => candidate.pid === pid);
      if (worker === undefined) throw new Error(`no worker ${pid}`);
      await worker.kill();
      liveProxy.upstreams.splice(liveProxy.upstreams.indexOf(worker.port), 1);
    },
    hold: (point) => writeFileSync(join(dir, `hold-${point}`), ""),
    release: (point) => writeFileSync(join(dir, `release-${point}`), ""),
    waitAt: async (point) => {
      const file = join(dir, `at-${point}`);
      await waitFor(
        () => existsSync(file) && readFileSync(file, "utf8") !== "",
        30_000,
        () => `nothing held at ${point}`,
      );
      return Number(readFileSync(file, "utf8"));
    },
    effects: () => effectCounts(readFileSync(join(dir, "effects"), "utf8")),
    waitForSteps: async (invocationId, wanted, what) => {
      let names: string[] = [];
      await waitFor(
        async () => {
          const rows = await liveServer.query(`SELECT name FROM sys_journal WHERE id = '${invocationId}'`);
          names = rows.map((row) => String(row.name));
          return wanted(names);
        },
        30_000,
        () => `${what} not journaled: ${names.join(", ")}`,
      );
      return names;
    },
    stop,
  };
}
