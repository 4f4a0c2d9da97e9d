// What the default compaction costs, with tool inputs long enough that it has work to do: every
// call's input is ~200 characters of JSON, over the default 120-character limit, so each call is
// cut once it is `keepTurns` turns old. Compared with `compaction: false` on the same script.
//
//   npm run compaction                 per turn (T = 1000, synchronous tool) and N = 2,000 runs at once
//   npm run compaction -- --n=500      another N
//
// Each measurement runs in its own fresh process, compaction on and off alternating, medians of 3.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { agentLoop, initSession, type InvokeModel, type ToolDefinition } from "simple-agent-loop";

const LONG_TEXT = "a long tool input, over the compaction limit, ".repeat(5).slice(0, 200);
const TURNS_PER_RUN = 50;
const TOOL_MS = 20;

type Mode = "default" | "off";
type Task = "turns" | "concurrent";
type Measurement = { wallMs: number; cpuMs: number; usPerTurn: number; rssPerRunKB: number; heapPerRunKB: number };

if (process.argv[2] === "--child")
  await child(process.argv[3] as Task, process.argv[4] as Mode, Number(process.argv[5]));
else await main(process.argv.slice(2));

async function main(argv: string[]): Promise<void> {
  let n = 2000;
  for (const arg of argv) {
    if (arg.startsWith("--n=")) n = Number(arg.slice(4));
    else throw new Error(`unknown argument "${arg}"`);
  }
  for (const task of ["turns", "concurrent"] as const) {
    const runs: Record<Mode, Measurement[]> = { default: [], off: [] };
    for (let round = 0; round < 3; round++)
      for (const mode of ["default", "off"] as const) runs[mode].push(await inChild(task, mode, n));
    for (const mode of ["default", "off"] as const) {
      const median = (pick: (m: Measurement) => number): number => runs[mode].map(pick).sort((a, b) => a - b)[1]!;
      console.log(
        task === "turns"
          ? `${task.padEnd(10)} compaction ${mode.padEnd(7)} T=1000  ${median((m) => m.usPerTurn).toFixed(2)} µs/turn`
          : `${task.padEnd(10)} compaction ${mode.padEnd(7)} N=${n}  wall ${Math.round(median((m) => m.wallMs))} ms  CPU ${Math.round(median((m) => m.cpuMs))} ms  ${Math.round(median((m) => m.rssPerRunKB))} KB RSS/run  ${Math.round(median((m) => m.heapPerRunKB))} KB heap/run`,
      );
    }
  }
}

function inChild(task: Task, mode: Mode, n: number): Promise<Measurement> {
  return new Promise((resolve, reject) => {
    const worker = fork(fileURLToPath(import.meta.url), ["--child", task, mode, String(n)], {
      execArgv: ["--expose-gc"],
    });
    worker.once("message", (message) => resolve(message as Measurement));
    worker.once("error", reject);
    worker.once("exit", (code) => (code === 0 ? undefined : reject(new Error(`child exited with ${code}`))));
  });
}

// The model asks for one `echo` call per turn with the long input, then answers "done".
function scriptedModel(turns: number): InvokeModel {
  let call = 0;
  return () => {
    call++;
    if (call > turns) return [{ role: "assistant", content: "done" }];
    return [{ type: "tool_call", id: `call_${call}`, name: "echo", input: { text: LONG_TEXT, turn: call } }];
  };
}

function echoTool(sleepMs: number): ToolDefinition {
  return {
    name: "echo",
    description: "Echoes its text.",
    input_schema: {
      type: "object",
      properties: { text: { type: "string" }, turn: { type: "number" } },
      required: ["text"],
      additionalProperties: false,
    },
    handler:
      sleepMs === 0
        ? (input: { text: string }) => input.text.length
        : (input: { text: string }) => new Promise((resolve) => setTimeout(() => resolve(input.text.length), sleepMs)),
  } as ToolDefinition;
}

async function run(turns: number, sleepMs: number, mode: Mode): Promise<void> {
  const session = initSession("You echo.", "Echo the texts.");
  await agentLoop(scriptedModel(turns), [echoTool(sleepMs)], session, {
    maxIterations: turns + 1,
    ...(mode === "off" ? { compaction: false } : {}),
  });
  if (session.messages.length !== 2 + turns * 2 + 1) throw new Error(`run ended early: ${session.messages.length}`);
}

async function child(task: Task, mode: Mode, n: number): Promise<void> {
  for (let warm = 0; warm < 5; warm++) await run(200, 0, mode);
  globalThis.gc?.();
  const before = process.memoryUsage();
  let peakRss = before.rss;
  let peakHeap = before.heapUsed;
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    peakRss = Math.max(peakRss, now.rss);
    peakHeap = Math.max(peakHeap, now.heapUsed);
  }, 50);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const runs = task === "turns" ? 1 : n;
  if (task === "turns") await run(1000, 0, mode);
  else await Promise.all(Array.from({ length: n }, () => run(TURNS_PER_RUN, TOOL_MS, mode)));
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(sampler);
  process.send!(
    {
      wallMs,
      cpuMs: (cpu.user + cpu.system) / 1000,
      usPerTurn: (wallMs * 1000) / (task === "turns" ? 1000 : TURNS_PER_RUN),
      rssPerRunKB: (peakRss - before.rss) / 1024 / runs,
      heapPerRunKB: (peakHeap - before.heapUsed) / 1024 / runs,
    } satisfies Measurement,
    () => process.exit(0),
  );
}
