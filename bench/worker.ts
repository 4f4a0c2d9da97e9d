// One measurement of one library, in a process of its own (started by bench.ts with --expose-gc):
//   node --expose-gc worker.ts <adapter> time    turns workloads and the 8 x 100 ms workload
//   node --expose-gc worker.ts <adapter> memory  one T=1000 run, heap sampled on every call
// The result goes to the parent over IPC (or to stdout as JSON when run by hand).
import { ADAPTERS, isAdapterId } from "./adapters/index.ts";
import { Workload, type Adapter, type WorkloadSpec } from "./common.ts";

export type TimeSettings = {
  /** Session lengths (model turns that call a tool) to time, in order. */
  turnCounts: number[];
  /** Warm-up runs before the first session length (1 before each later one: the code is hot by then). */
  warmupRuns: number;
  /** Measured runs per session length: enough to fill `budgetMs`, within [minRuns, maxRuns]. */
  minRuns: number;
  maxRuns: number;
  budgetMs: number;
  parallelWarmupRuns: number;
  parallelRuns: number;
  /** Session length of the memory run. */
  memoryTurns: number;
};

export type TurnsResult = {
  turns: number;
  /** Wall time of each measured run, in milliseconds. */
  runsMs: number[];
  /** Median run wall time / turns, in microseconds. */
  medianUsPerTurn: number;
  minUsPerTurn: number;
  maxUsPerTurn: number;
};

export type TimeResult = {
  kind: "time";
  turns: TurnsResult[];
  parallel: { calls: number; sleepMs: number; runsMs: number[]; medianMs: number };
};

export type MemoryResult = {
  kind: "memory";
  turns: number;
  /** heapUsed after two gc() calls, before the measured run (library loaded and warmed up). */
  baselineHeapMB: number;
  /** Highest heapUsed sampled at every model call and tool call during the run, minus the baseline. */
  peakHeapDeltaMB: number;
  /** heapUsed after the run and two gc() calls, with the run's history still referenced, minus the baseline. */
  retainedHeapDeltaMB: number;
  /** process.resourceUsage().maxRSS at the end: the process's peak resident set, whole process. */
  maxRssMB: number;
  samples: number;
};

export type WorkerResult = TimeResult | MemoryResult;

const MB = 1024 * 1024;

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect === undefined) throw new Error("bench: run with node --expose-gc");
  collect();
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** One complete run: fresh workload, run, check that every model and tool call happened. */
async function runOnce(
  adapter: Adapter,
  spec: WorkloadSpec,
  probe?: () => void,
): Promise<{ ms: number; keep: unknown }> {
  const workload = new Workload(spec, probe);
  const started = process.hrtime.bigint();
  const output = await adapter.run(workload);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  workload.assertComplete(adapter.name);
  if (output.text !== "done")
    throw new Error(`bench: ${adapter.name} ended with ${JSON.stringify(output.text)}, expected "done"`);
  return { ms, keep: output.keep };
}

async function measureTime(adapter: Adapter, settings: TimeSettings): Promise<TimeResult> {
  const turns: TurnsResult[] = [];
  for (const [index, count] of settings.turnCounts.entries()) {
    const spec = { turns: count, callsPerTurn: 1, toolSleepMs: 0 };
    // Warm up to steady state (JIT tiers), not for a fixed count: up to warmupRuns runs or 1.5 s.
    let warmupMs = 0;
    const warmupStart = performance.now();
    for (let i = 0; i < (index === 0 ? settings.warmupRuns : 1); i++) {
      warmupMs = (await runOnce(adapter, spec)).ms;
      if (performance.now() - warmupStart > 1500) break;
    }
    const runs = Math.min(
      settings.maxRuns,
      Math.max(settings.minRuns, Math.ceil(settings.budgetMs / Math.max(warmupMs, 0.001))),
    );
    const runsMs: number[] = [];
    for (let i = 0; i < runs; i++) {
      gc(); // garbage of the previous run is not billed to this one
      runsMs.push((await runOnce(adapter, spec)).ms);
    }
    const perTurn = runsMs.map((ms) => (ms * 1000) / count);
    turns.push({
      turns: count,
      runsMs,
      medianUsPerTurn: median(perTurn),
      minUsPerTurn: Math.min(...perTurn),
      maxUsPerTurn: Math.max(...perTurn),
    });
  }
  const parallelSpec = { turns: 1, callsPerTurn: 8, toolSleepMs: 100 };
  for (let i = 0; i < settings.parallelWarmupRuns; i++) await runOnce(adapter, parallelSpec);
  const runsMs: number[] = [];
  for (let i = 0; i < settings.parallelRuns; i++) {
    gc();
    runsMs.push((await runOnce(adapter, parallelSpec)).ms);
  }
  return { kind: "time", turns, parallel: { calls: 8, sleepMs: 100, runsMs, medianMs: median(runsMs) } };
}

async function measureMemory(adapter: Adapter, turns: number): Promise<MemoryResult> {
  // Warm up on a short run so lazy imports and first-call caches are not counted as session cost.
  await runOnce(adapter, { turns: 20, callsPerTurn: 1, toolSleepMs: 0 });
  gc();
  gc();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  let samples = 0;
  const probe = (): void => {
    const used = process.memoryUsage().heapUsed;
    if (used > peak) peak = used;
    samples++;
  };
  const { keep } = await runOnce(adapter, { turns, callsPerTurn: 1, toolSleepMs: 0 }, probe);
  probe();
  gc();
  gc();
  const retained = process.memoryUsage().heapUsed;
  // Reading `keep` after the collection keeps the run's history alive through it.
  if (keep === undefined) throw new Error("bench: adapter returned nothing to keep");
  return {
    kind: "memory",
    turns,
    baselineHeapMB: baseline / MB,
    peakHeapDeltaMB: (peak - baseline) / MB,
    retainedHeapDeltaMB: (retained - baseline) / MB,
    maxRssMB: (process.resourceUsage().maxRSS * 1024) / MB,
    samples,
  };
}

export const DEFAULT_TIME_SETTINGS: TimeSettings = {
  turnCounts: [200, 1000],
  warmupRuns: 25,
  minRuns: 5,
  maxRuns: 31,
  budgetMs: 3000,
  parallelWarmupRuns: 1,
  parallelRuns: 5,
  memoryTurns: 1000,
};

async function main(): Promise<void> {
  const [id, task, settingsJson] = process.argv.slice(2);
  if (id === undefined || !isAdapterId(id) || (task !== "time" && task !== "memory")) {
    throw new Error(
      `usage: node --expose-gc worker.ts <${Object.keys(ADAPTERS).join("|")}> <time|memory> [settings JSON]`,
    );
  }
  const adapter = await ADAPTERS[id]();
  const settings: TimeSettings = settingsJson === undefined ? DEFAULT_TIME_SETTINGS : JSON.parse(settingsJson);
  const result: WorkerResult =
    task === "time" ? await measureTime(adapter, settings) : await measureMemory(adapter, settings.memoryTurns);
  // Some libraries leave handles open (timers, agents); once the result is out, leave.
  if (process.send !== undefined) process.send(result, () => process.exit(0));
  else {
    console.log(JSON.stringify(result, null, 2));
    process.exit(0);
  }
}

if (import.meta.main) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
