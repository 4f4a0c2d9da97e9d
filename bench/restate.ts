// Restate benchmark: SESSIONS concurrent sessions of TURNS turns (zero-latency scripted model, a
// cheap tool) on 2 worker processes behind a TCP proxy, one restate-server on loopback. Reports
// sessions per second, the cost of a durable step against the in-process loop's, and the server's
// memory. Run from bench/:
//   ../node_modules/.bin/node --conditions=simple-agent-loop-source restate.ts [--sessions=200]
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { agentLoop, initSession } from "simple-agent-loop";
import { startRestateServer } from "../test/restate/restate-server.ts";
import { startTcpProxy } from "../test/restate/tcp-proxy.ts";
import { TURNS, benchModel, benchTools } from "./restate-agent.ts";

const sessions = Number(/--sessions=(\d+)/.exec(process.argv.join(" "))?.[1] ?? 200);
const log = (line: string): void => void process.stderr.write(`${line}\n`);

// Each model call and each tool call is a step: TURNS tool turns and the final answer.
const stepsPerSession = 2 * TURNS + 1;

const inProcessUs = await measureInProcess();
log(`in-process: ${inProcessUs.toFixed(2)} µs/step`);

// Small h2 stream limit: the server opens several connections, which the proxy spreads over workers.
const server = await startRestateServer({ streamsPerConnection: 16 });
const workers = [await startWorker(), await startWorker()];
const proxy = await startTcpProxy(workers.map((worker) => worker.port));
try {
  await server.register(proxy.url);
  const run = async (id: string): Promise<void> => {
    const reply = await fetch(`${server.ingressUrl}/bench/${id}/run`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ system: "bench", message: "go" }),
    });
    const result = (await reply.json()) as { outcome?: string };
    if (!reply.ok || result.outcome !== "done") throw new Error(`${id}: ${JSON.stringify(result)}`);
  };
  for (let index = 0; index < 20; index++) await run(`warm-${index}`);

  // One session at a time: the latency of a durable step.
  const sequential: number[] = [];
  for (let index = 0; index < 20; index++) {
    const started = performance.now();
    await run(`seq-${index}`);
    sequential.push((performance.now() - started) / stepsPerSession);
  }
  const msPerStep = median(sequential);
  log(`sequential: ${msPerStep.toFixed(2)} ms/step`);

  const memoryBefore = server.memory();
  const started = performance.now();
  await Promise.all(Array.from({ length: sessions }, (_, index) => run(`s-${index}`)));
  const seconds = (performance.now() - started) / 1000;
  const memoryAfter = server.memory();
  const workerMemory = workers.map((worker) => worker.memory());
  const results = {
    sessions,
    turns: TURNS,
    stepsPerSession,
    sessionsPerSecond: sessions / seconds,
    stepsPerSecond: (sessions * stepsPerSession) / seconds,
    wallSeconds: seconds,
    inProcessUsPerStep: inProcessUs,
    durableMsPerStepSequential: msPerStep,
    overheadPerStepMs: msPerStep - inProcessUs / 1000,
    serverRssMbBefore: memoryBefore / 2 ** 20,
    serverRssMbAfter: memoryAfter / 2 ** 20,
    workerRssMb: workerMemory.map((bytes) => bytes / 2 ** 20),
    proxyConnectionsPerWorker: workers.map((worker) => proxy.connections.get(worker.port) ?? 0),
    cpus: cpus().length,
    node: process.version,
  };
  writeFileSync(new URL("restate-results.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  const row = (name: string, value: string): string => `| ${name} | ${value} |`;
  console.log(
    [
      "| measure | value |",
      "| --- | --- |",
      row(`sessions/s (${sessions} concurrent × ${TURNS} turns, 2 workers)`, results.sessionsPerSecond.toFixed(1)),
      row("durable steps/s (model + tool calls)", results.stepsPerSecond.toFixed(0)),
      row("in-process loop, µs per step", inProcessUs.toFixed(2)),
      row("durable, ms per step (one session at a time)", msPerStep.toFixed(2)),
      row(
        "server RSS MB before / after the burst",
        `${results.serverRssMbBefore.toFixed(0)} / ${results.serverRssMbAfter.toFixed(0)}`,
      ),
      row("worker RSS MB", results.workerRssMb.map((mb) => mb.toFixed(0)).join(" / ")),
      row("connections per worker", results.proxyConnectionsPerWorker.join(" / ")),
    ].join("\n"),
  );
} finally {
  for (const worker of workers) worker.kill();
  await proxy.close();
  await server.stop();
}

async function measureInProcess(): Promise<number> {
  const runs: number[] = [];
  for (let index = 0; index < 300; index++) {
    const session = initSession("bench", "go");
    const started = performance.now();
    await agentLoop(benchModel, benchTools, session, { compaction: false });
    runs.push((performance.now() - started) * 1000);
  }
  return median(runs.slice(50)) / stepsPerSession;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function startWorker(): Promise<{ port: number; kill: () => void; memory: () => number }> {
  const child = spawn(process.execPath, ["--conditions=simple-agent-loop-source", "restate-worker.ts"], {
    cwd: new URL(".", import.meta.url),
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const match = /\{"port":(\d+)\}/.exec(out);
      if (match !== null) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`worker exited with ${code}`)));
  });
  const memory = (): number => {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
    return match === null ? 0 : Number(match[1]) * 1024;
  };
  return { port, kill: () => void child.kill("SIGKILL"), memory };
}
