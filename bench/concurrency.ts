// Many agents in one process: N runs at once, each 50 model calls (49 of them ask for one tool
// call, whose handler answers after 20 ms, the last answers with text). Ideal wall time is
// 49 × 20 ms whatever N is; what a library adds to it, and the memory each run holds while all
// are in flight, is its cost for a server running many agents.
//
//   npm run concurrency                          ours, hand-written, pi-agent-core at N = 2,000
//   npm run concurrency -- --n=500 --only=ours   other sizes and libraries (any adapter id)
//   npm run concurrency -- --events              ours with a listener on every event
//   npm run concurrency -- --cpu-prof            each child writes a CPU profile to profiles/
//
// Each library runs in its own fresh process (median of --repeat runs, default 3). Writes
// concurrency-results.json.
import { fork } from "node:child_process";
import { writeFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { ADAPTERS, isAdapterId, type AdapterId } from "./adapters/index.ts";
import { Workload } from "./common.ts";

const TOOL_TURNS = 49;
const TOOL_MS = 20;
const IDEAL_MS = TOOL_TURNS * TOOL_MS;

// cpuMs: the child's CPU time (user + system) for the N runs: on a loaded machine wall time
// mostly measures the neighbours, CPU time still measures the library.
type Measurement = { wallMs: number; cpuMs: number; rssPerRunKB: number; heapPerRunKB: number };

if (process.argv[2] === "--child")
  await child(process.argv[3] as AdapterId, Number(process.argv[4]), process.argv[5] === "events");
else await main(process.argv.slice(2));

async function main(argv: string[]): Promise<void> {
  let n = 2000;
  let repeat = 3;
  let events = false;
  let profile = false;
  let ids: AdapterId[] = ["ours", "handwritten", "pi-agent-core"];
  for (const arg of argv) {
    if (arg.startsWith("--n=")) n = Number(arg.slice(4));
    else if (arg.startsWith("--repeat=")) repeat = Number(arg.slice(9));
    else if (arg === "--events") events = true;
    else if (arg === "--cpu-prof") profile = true;
    else if (arg.startsWith("--only=")) {
      const wanted = arg.slice(7).split(",");
      for (const id of wanted) if (!isAdapterId(id)) throw new Error(`unknown library "${id}"`);
      ids = wanted as AdapterId[];
    } else throw new Error(`unknown argument "${arg}"`);
  }
  const rows = [];
  for (const id of ids) {
    const runs: Measurement[] = [];
    for (let index = 0; index < repeat; index++) runs.push(await inChild(id, n, events && id === "ours", profile));
    const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const wallMs = median(runs.map((run) => run.wallMs));
    const row = {
      library: id + (events && id === "ours" ? " (listening to every event)" : ""),
      n,
      wallMs: Math.round(wallMs),
      overIdeal: `+${Math.round((wallMs / IDEAL_MS - 1) * 100)}%`,
      cpuMs: Math.round(median(runs.map((run) => run.cpuMs))),
      rssPerRunKB: Math.round(median(runs.map((run) => run.rssPerRunKB))),
      heapPerRunKB: Math.round(median(runs.map((run) => run.heapPerRunKB))),
      runs,
    };
    rows.push(row);
    console.log(
      `${row.library.padEnd(40)} N=${n}  wall ${row.wallMs} ms (${row.overIdeal} over ${IDEAL_MS} ms)  CPU ${row.cpuMs} ms  ${row.rssPerRunKB} KB RSS/run  ${row.heapPerRunKB} KB heap/run`,
    );
  }
  writeFileSync(
    fileURLToPath(new URL("concurrency-results.json", import.meta.url)),
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, cpu: os.cpus()[0]?.model, idealMs: IDEAL_MS, rows }, null, 2)}\n`,
  );
}

function inChild(id: AdapterId, n: number, events: boolean, profile: boolean): Promise<Measurement> {
  const profiling = profile
    ? [
        "--cpu-prof",
        `--cpu-prof-dir=${fileURLToPath(new URL("profiles", import.meta.url))}`,
        `--cpu-prof-name=concurrency-${id}-${Date.now()}.cpuprofile`,
      ]
    : [];
  return new Promise((resolve, reject) => {
    const worker = fork(fileURLToPath(import.meta.url), ["--child", id, String(n), events ? "events" : ""], {
      execArgv: ["--expose-gc", "--max-old-space-size=8192", ...profiling],
    });
    worker.once("message", (message) => resolve(message as Measurement));
    worker.once("exit", (code) => (code === 0 ? undefined : reject(new Error(`${id}: exited with ${code}`))));
  });
}

// In the child: start every run at once, sample memory while they are all in flight (at their
// peak: every run holds its whole history just before its last turn), report wall time to the last.
async function child(id: AdapterId, n: number, events: boolean): Promise<void> {
  const adapter = await ADAPTERS[id]();
  if (events) process.env.BENCH_LISTEN_TO_EVENTS = "1";
  // Warm up the library's code paths with a few runs first.
  await Promise.all(
    Array.from({ length: 20 }, () => adapter.run(new Workload({ turns: TOOL_TURNS, callsPerTurn: 1, toolSleepMs: 1 }))),
  );
  globalThis.gc?.();
  const before = process.memoryUsage();
  let peakRss = before.rss;
  let peakHeap = before.heapUsed;
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    peakRss = Math.max(peakRss, now.rss);
    peakHeap = Math.max(peakHeap, now.heapUsed);
  }, 50);
  const workloads = Array.from(
    { length: n },
    () => new Workload({ turns: TOOL_TURNS, callsPerTurn: 1, toolSleepMs: TOOL_MS }),
  );
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const outputs = await Promise.all(workloads.map((workload) => adapter.run(workload)));
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(sampler);
  workloads.forEach((workload, index) => workload.assertComplete(`${id} run ${index}`));
  if (outputs.length !== n) throw new Error("lost runs");
  process.send!(
    {
      wallMs,
      cpuMs: (cpu.user + cpu.system) / 1000,
      rssPerRunKB: (peakRss - before.rss) / 1024 / n,
      heapPerRunKB: (peakHeap - before.heapUsed) / 1024 / n,
    } satisfies Measurement,
    () => process.exit(0),
  );
}
