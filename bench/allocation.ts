// Bytes allocated per turn: what one turn of the loop leaves for the garbage collector, every
// library in one process.
//
//   npm run allocation                                  this checkout (the sources), hand-written, pi-agent-core
//   npm run allocation -- --lib=before=/tmp/old/src/index.ts   another checkout's sources beside it
//   npm run allocation -- --turns=200,1000 --runs=7 --only=ours,handwritten
//
// Allocation is deterministic where time is not: the young generation is made larger than a whole
// run (`--min-semi-space-size`, set by the npm script), so a run that starts after a full `gc()`
// ends before the first scavenge, and the growth of the heap across it is what it allocated.
// `v8.GCProfiler` says whether a collection ran anyway; such a run is not counted. The npm script
// also gives `--single-threaded`: V8's helper threads (concurrent sweeping, compilation) otherwise
// change the heap's size while a run is measured, so a subject's count moved by hundreds of bytes
// from run to run and the first subject's sometimes came out near zero or negative; with it, the
// counts repeat from one process to the next.
//
// Time is measured apart, in a child process with V8's usual heap and threads (`--times-only`): warm runs one
// after the other, the libraries taking turns, the fastest run of each kept, in CPU time (user +
// system: on a shared machine the time a run waits for a core is not the library's). Not in the runs above:
// a forced `gc()` collects the hidden classes (maps) of every object shape no live object has, and
// with them the optimized code that embeds them (`--trace-deopt`: "embedded weak objects cleared",
// "dependent field type changed", once a run), so a run after it times re-warming that code, and
// the larger a library's code the more; nor in the 256 MB young generation, whose fresh pages cost
// a page fault each as a run first touches them. The script is
// the one of bench.ts's turns workload: one `add` call a turn, answered at once, then "done". The
// calls differ from turn to turn (a sum of the turn's number), so simple-agent-loop's loop guard
// has nothing to refuse and every default stays on. The "awaited tool" rows run the same script
// with a handler that answers with an already-resolved promise: each call then takes the awaited
// path (the abort race, the promise reactions up to the loop) that a real asynchronous tool takes,
// without a timer, so the bytes of that path are as steady as the others.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import os from "node:os";
import { pathToFileURL, fileURLToPath } from "node:url";
import path from "node:path";
import v8 from "node:v8";
import type { AgentLoopOptions } from "simple-agent-loop";
import { ADAPTERS } from "./adapters/index.ts";
import { oursAdapter, type Library } from "./adapters/ours.ts";
import { Workload, type Adapter } from "./common.ts";

/** simple-agent-loop with everything optional off: what is left is the loop itself. */
export const EVERYTHING_OFF: Partial<AgentLoopOptions> = {
  compaction: false,
  largeOutput: false,
  loopGuard: false,
  eagerTools: false,
  retry: false,
};

type Row = {
  library: string;
  configuration: string;
  turns: number;
  /** Bytes allocated per turn: the least of the counted runs (they agree to a few bytes). */
  bytesPerTurn: number;
  /** Microseconds of CPU per turn, the fastest of the warm runs (the timing child's). */
  minUsPerTurn: number;
  /** Microseconds per turn, the fastest of the counted runs, each right after a forced `gc()`: re-warming included. */
  minUsPerTurnAfterGc: number;
  /** Runs counted (no collection during them) of the runs made. */
  counted: number;
  runs: number;
};

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("bench: run with node --expose-gc (npm run allocation)");

await main(process.argv.slice(2));

async function main(argv: string[]): Promise<void> {
  let turnCounts = [200, 1000];
  let runs = 5;
  let only: string[] | undefined;
  let timesOnly = false;
  const libraries: { label: string; lib: Library }[] = [];
  for (const arg of argv) {
    if (arg === "--times-only") timesOnly = true;
    else if (arg.startsWith("--turns=")) turnCounts = arg.slice(8).split(",").map(Number);
    else if (arg.startsWith("--runs=")) runs = Number(arg.slice(7));
    else if (arg.startsWith("--only=")) only = arg.slice(7).split(",");
    else if (arg.startsWith("--lib=")) {
      const [label, file] = arg.slice(6).split("=") as [string, string | undefined];
      if (file === undefined) throw new Error(`--lib=LABEL=PATH, got "${arg}"`);
      libraries.push({ label, lib: (await import(pathToFileURL(path.resolve(file)).href)) as Library });
    } else throw new Error(`unknown argument "${arg}"`);
  }
  libraries.unshift({ label: "simple-agent-loop", lib: await import("simple-agent-loop") });
  const subjects: Subject[] = [];
  const wanted = (id: string): boolean => only === undefined || only.includes(id);
  if (wanted("ours"))
    for (const { label, lib } of libraries) {
      subjects.push({ library: label, configuration: "defaults", adapter: oursAdapter(lib) });
      subjects.push({
        library: label,
        configuration: "defaults, onEvent",
        adapter: oursAdapter(lib, { onEvent: () => undefined }),
      });
      subjects.push({ library: label, configuration: "everything off", adapter: oursAdapter(lib, EVERYTHING_OFF) });
      subjects.push({
        library: label,
        configuration: "defaults, awaited tool",
        adapter: oursAdapter(lib),
        awaited: true,
      });
    }
  for (const id of ["handwritten", "pi-agent-core"] as const)
    if (wanted(id)) {
      const adapter = await ADAPTERS[id]().catch(() => undefined);
      if (adapter === undefined) console.error(`${id}: not installed (npm install in bench/), skipped`);
      else {
        subjects.push({ library: adapter.name, configuration: "", adapter });
        if (id === "handwritten")
          subjects.push({ library: adapter.name, configuration: "awaited tool", adapter, awaited: true });
      }
    }
  if (timesOnly) {
    const times = await warmTimes(subjects, turnCounts, runs);
    process.stdout.write(`${JSON.stringify(times)}\n`);
    return;
  }
  const times = timeInChild(argv);
  const rows: Row[] = [];
  for (const turns of turnCounts)
    for (const [index, subject] of subjects.entries()) {
      const row = await measure(subject, turns, runs);
      const minUsPerTurn = times[`${turns}:${index}`] ?? Number.NaN;
      rows.push({ library: subject.library, configuration: subject.configuration, ...row, minUsPerTurn });
      console.log(
        `${`${subject.library}${subject.configuration === "" ? "" : ` (${subject.configuration})`}`.padEnd(48)} T=${String(turns).padEnd(5)} ` +
          `${String(row.bytesPerTurn).padStart(7)} B/turn  ${minUsPerTurn.toFixed(2).padStart(7)} µs/turn (min, warm)  ` +
          `${row.minUsPerTurnAfterGc.toFixed(2).padStart(7)} after gc()  ${row.counted}/${row.runs} runs without GC`,
      );
    }
  writeFileSync(
    fileURLToPath(new URL("allocation-results.json", import.meta.url)),
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, cpu: os.cpus()[0]?.model, rows }, null, 2)}\n`,
  );
}

/** A library in one configuration; `awaited`: its tool answers with a resolved promise. */
type Subject = { library: string; configuration: string; adapter: Adapter; awaited?: boolean };

// Warm-up runs, then `runs` measured ones, each after a full collection.
async function measure(
  subject: Subject,
  turns: number,
  runs: number,
): Promise<Omit<Row, "library" | "configuration" | "minUsPerTurn">> {
  const { adapter } = subject;
  for (let index = 0; index < 3; index++) await runOnce(subject, turns);
  let bytes = Infinity;
  let microseconds = Infinity;
  let counted = 0;
  for (let index = 0; index < runs; index++) {
    gc!();
    const profiler = new v8.GCProfiler();
    profiler.start();
    const before = v8.getHeapStatistics().used_heap_size;
    const started = performance.now();
    await runOnce(subject, turns);
    const elapsed = performance.now() - started;
    const after = v8.getHeapStatistics().used_heap_size;
    const collections = profiler.stop()?.statistics.length ?? 0;
    if (collections > 0) continue;
    counted++;
    bytes = Math.min(bytes, after - before);
    microseconds = Math.min(microseconds, (elapsed * 1000) / turns);
  }
  if (counted === 0) throw new Error(`${adapter.name}: every run collected garbage; give a larger young generation`);
  return { turns, bytesPerTurn: Math.round(bytes / turns), minUsPerTurnAfterGc: microseconds, counted, runs };
}

// This script again, with V8's usual heap and `--times-only`: its warm times by `turns:subject index`.
function timeInChild(argv: string[]): Record<string, number> {
  const execArgv = process.execArgv.filter((flag) => !flag.includes("semi-space-size") && flag !== "--single-threaded");
  const child = spawnSync(process.execPath, [...execArgv, fileURLToPath(import.meta.url), ...argv, "--times-only"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 1 << 20,
  });
  if (child.status !== 0) throw new Error(`bench: the timing child failed (${child.status ?? child.signal})`);
  return JSON.parse(child.stdout.trim().split("\n").at(-1)!) as Record<string, number>;
}

// Warm runs, the subjects taking turns (so a slow minute of a shared machine falls on all of them),
// no forced collection in between: the fastest run of each, in microseconds of CPU per turn.
async function warmTimes(
  subjects: readonly Subject[],
  turnCounts: readonly number[],
  runs: number,
): Promise<Record<string, number>> {
  const times: Record<string, number> = {};
  for (const turns of turnCounts) {
    for (const subject of subjects) for (let index = 0; index < 3; index++) await runOnce(subject, turns);
    // More rounds than the byte runs: a minimum of time needs many tries on a shared machine.
    for (let round = 0; round < Math.max(20, 8 * runs); round++)
      for (const [index, subject] of subjects.entries()) {
        const started = process.cpuUsage();
        await runOnce(subject, turns);
        const { user, system } = process.cpuUsage(started);
        const microseconds = (user + system) / turns;
        const key = `${turns}:${index}`;
        times[key] = Math.min(times[key] ?? Number.POSITIVE_INFINITY, microseconds);
      }
  }
  return times;
}

async function runOnce({ adapter, awaited }: Subject, turns: number): Promise<void> {
  const workload = new Workload({ turns, callsPerTurn: 1, toolSleepMs: 0, awaited: awaited === true });
  const output = await adapter.run(workload);
  workload.assertComplete(adapter.name);
  if (output.text !== "done") throw new Error(`${adapter.name}: answered "${output.text}"`);
}
