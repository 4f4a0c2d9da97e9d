// Agent-loop overhead benchmark: simple-agent-loop and its peers, each driven by a zero-latency
// scripted model, each measured in fresh child processes (worker.ts), one after another.
//
//   npm run bench                      all libraries (build the main package first: npm run build in ..)
//   npm run bench -- --only=ours,ai-sdk
//   npm run bench -- --quick           fewer runs, for checking that everything works
//
// Prints a table on stdout and writes the same rows to results.json. Exits non-zero if any
// library failed (its row says so, and the error is printed and kept in the JSON).
import { fork } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { ADAPTERS, isAdapterId, type AdapterId } from "./adapters/index.ts";
import {
  DEFAULT_TIME_SETTINGS,
  type MemoryResult,
  type TimeResult,
  type TimeSettings,
  type WorkerResult,
} from "./worker.ts";

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

type Row = {
  id: AdapterId;
  library: string;
  version: string;
  validation: string;
  modelHook: string;
  usPerTurnT200: number | null;
  usPerTurnT1000: number | null;
  growthT1000vsT200: number | null;
  parallel8x100msWallMs: number | null;
  peakHeapDeltaMB: number | null;
  retainedHeapDeltaMB: number | null;
  maxRssMB: number | null;
  errors: string[];
  time?: TimeResult;
  memory?: MemoryResult;
};

function parseArgs(argv: string[]): { ids: AdapterId[]; settings: TimeSettings } {
  let ids = Object.keys(ADAPTERS) as AdapterId[];
  let settings = { ...DEFAULT_TIME_SETTINGS };
  for (const arg of argv) {
    if (arg.startsWith("--only=")) {
      const wanted = arg.slice("--only=".length).split(",").filter(Boolean);
      for (const id of wanted)
        if (!isAdapterId(id)) throw new Error(`unknown library "${id}"; known: ${Object.keys(ADAPTERS).join(", ")}`);
      ids = wanted as AdapterId[];
    } else if (arg === "--quick") {
      settings = {
        ...settings,
        warmupRuns: 1,
        minRuns: 3,
        maxRuns: 5,
        budgetMs: 500,
        parallelWarmupRuns: 0,
        parallelRuns: 1,
      };
    } else {
      throw new Error(`unknown argument "${arg}" (use --only=a,b and/or --quick)`);
    }
  }
  return { ids, settings };
}

function checkBuild(): void {
  const built = here("../dist/index.js");
  if (!existsSync(built))
    throw new Error("../dist/index.js is missing: run `npm run build` in the repository root first");
  const builtAt = statSync(built).mtimeMs;
  const sources = readdirSync(here("../src"), { recursive: true, encoding: "utf8" }).filter((file) =>
    file.endsWith(".ts"),
  );
  const stale = sources.filter((file) => statSync(here(`../src/${file}`)).mtimeMs > builtAt);
  if (stale.length > 0)
    console.error(`warning: src/ is newer than dist/ (${stale.join(", ")}): run \`npm run build\` in the root`);
}

function packageVersion(name: string): string {
  const path = name === "simple-agent-loop" ? here("../package.json") : here(`node_modules/${name}/package.json`);
  return (JSON.parse(readFileSync(path, "utf8")) as { version: string }).version;
}

/** Runs one worker process and returns what it sent; its own output goes to stderr. */
function runWorker(id: AdapterId, task: "time" | "memory", settings: TimeSettings): Promise<WorkerResult> {
  return new Promise((resolve, reject) => {
    const child = fork(here("worker.ts"), [id, task, JSON.stringify(settings)], {
      execArgv: ["--expose-gc"],
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
    let result: WorkerResult | undefined;
    let output = "";
    const collect = (chunk: Buffer): void => {
      output += chunk.toString();
      process.stderr.write(chunk);
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    child.on("message", (message) => (result = message as WorkerResult));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (result !== undefined && code === 0) resolve(result);
      else {
        const lastLines = output.trim().split("\n").slice(-12).join("\n");
        reject(
          new Error(`${task} worker for ${id} exited with ${signal ?? code}${lastLines ? `:\n${lastLines}` : ""}`),
        );
      }
    });
  });
}

function fmt(value: number | null, digits: number): string {
  return value === null ? "FAILED" : value.toFixed(digits);
}

function fmtUs(value: number | null): string {
  if (value === null) return "FAILED";
  return value >= 100 ? value.toFixed(0) : value.toFixed(1);
}

function table(rows: Row[]): string {
  const header = [
    "library",
    "version",
    "µs/turn T=200",
    "µs/turn T=1000",
    "growth 1000/200",
    "8×100ms wall ms",
    "peak heap Δ MB",
    "retained MB",
    "max RSS MB",
  ];
  const lines = rows.map((row) => [
    row.library,
    row.version,
    fmtUs(row.usPerTurnT200),
    fmtUs(row.usPerTurnT1000),
    row.growthT1000vsT200 === null ? "FAILED" : `${row.growthT1000vsT200.toFixed(2)}×`,
    fmt(row.parallel8x100msWallMs, 1),
    fmt(row.peakHeapDeltaMB, 1),
    fmt(row.retainedHeapDeltaMB, 2),
    fmt(row.maxRssMB, 0),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  const render = (cells: string[]): string =>
    cells
      .map((cell, column) => (column < 2 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join("  ");
  return [render(header), widths.map((width) => "-".repeat(width)).join("  "), ...lines.map(render)].join("\n");
}

async function main(): Promise<void> {
  const { ids, settings } = parseArgs(process.argv.slice(2));
  checkBuild();
  const rows: Row[] = [];
  for (const id of ids) {
    const adapter = await ADAPTERS[id]();
    const row: Row = {
      id,
      library: adapter.name,
      version: adapter.packageName === "" ? "-" : packageVersion(adapter.packageName),
      validation: adapter.validation,
      modelHook: adapter.modelHook,
      usPerTurnT200: null,
      usPerTurnT1000: null,
      growthT1000vsT200: null,
      parallel8x100msWallMs: null,
      peakHeapDeltaMB: null,
      retainedHeapDeltaMB: null,
      maxRssMB: null,
      errors: [],
    };
    rows.push(row);
    for (const task of ["time", "memory"] as const) {
      console.error(`[bench] ${adapter.name}: ${task}...`);
      const started = performance.now();
      try {
        const result = await runWorker(id, task, settings);
        if (result.kind === "time") {
          row.time = result;
          const at = (turns: number): number | null =>
            result.turns.find((entry) => entry.turns === turns)?.medianUsPerTurn ?? null;
          row.usPerTurnT200 = at(200);
          row.usPerTurnT1000 = at(1000);
          row.growthT1000vsT200 =
            row.usPerTurnT200 !== null && row.usPerTurnT1000 !== null ? row.usPerTurnT1000 / row.usPerTurnT200 : null;
          row.parallel8x100msWallMs = result.parallel.medianMs;
        } else {
          row.memory = result;
          row.peakHeapDeltaMB = result.peakHeapDeltaMB;
          row.retainedHeapDeltaMB = result.retainedHeapDeltaMB;
          row.maxRssMB = result.maxRssMB;
        }
      } catch (error) {
        row.errors.push(error instanceof Error ? error.message : String(error));
      }
      console.error(`[bench] ${adapter.name}: ${task} took ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
  }

  const cpus = os.cpus();
  const report = {
    generatedAt: new Date().toISOString(),
    environment: {
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      cpu: cpus[0]?.model ?? "unknown",
      cores: cpus.length,
    },
    settings,
    columns: {
      usPerTurnT200:
        "median over runs of (wall time of a whole T=200 run / 200), microseconds; 1 tool call per turn, zero-latency model",
      usPerTurnT1000: "the same for T=1000",
      growthT1000vsT200: "usPerTurnT1000 / usPerTurnT200: 1 = per-turn cost independent of session length",
      parallel8x100msWallMs:
        "median wall time of one turn with 8 tool calls that each sleep 100 ms, then a final answer; ~100 = parallel, ~800 = sequential",
      peakHeapDeltaMB:
        "T=1000 run in a fresh process: highest process.memoryUsage().heapUsed sampled at every model and tool call, minus the heap after warm-up and gc(); includes garbage not yet collected",
      retainedHeapDeltaMB:
        "heapUsed after the T=1000 run and gc(), with the run's history still referenced, minus the same baseline",
      maxRssMB:
        "process.resourceUsage().maxRSS of that fresh process: the whole process's peak resident set (runtime + library + run)",
    },
    libraries: rows,
  };
  writeFileSync(here("results.json"), `${JSON.stringify(report, null, 2)}\n`);

  console.log(
    `Agent-loop overhead, zero-latency scripted model (${report.environment.node}, ${report.environment.cpu}, ${report.environment.cores} cores)\n`,
  );
  console.log(table(rows));
  console.log("\nTool input validation and model hook:");
  for (const row of rows) console.log(`  ${row.library}: ${row.validation}; ${row.modelHook}`);
  const failed = rows.filter((row) => row.errors.length > 0);
  for (const row of failed) {
    console.log(
      `\nFAILED ${row.library}:\n${row.errors.map((error) => `  ${error.replaceAll("\n", "\n  ")}`).join("\n")}`,
    );
  }
  console.log(`\nWritten to ${here("results.json")}`);
  if (failed.length > 0) process.exitCode = 1;
}

await main();
