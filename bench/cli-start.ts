// How long the CLI takes from spawn to its first prompt, as a user starts it: spawned in a
// pseudo-terminal, timed until the prompt's "> " is drawn, then Ctrl-D. Target: < 150 ms.
//
// Run: npm run cli-start (Node 24). Settings, from the environment:
// - ENTRY=dist: the built bin, dist/cli/bin.js (`npm run build` first), as the installed package runs it; ENTRY=src (the
//   default): the sources under Node's type stripping, as `npm start` runs them; ENTRY=<path>: that file.
// - RUNS=10: runs per case. ARGS="--sandbox off": more CLI arguments.
// - CASES=cold,warm,floor: which cases. cold: a fresh CLI home each run (so no compile cache and no
//   cached sandbox probe: a first start after an install or upgrade); warm: one home kept across
//   runs after an unmeasured first run (every later start); floor: Node itself drawing a "> "
//   prompt with node:readline and nothing else, the least a start can take on this machine.
// No model is called: the CLI is pointed at a closed local port.
import { spawn } from "@lydell/node-pty";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const runs = Number(process.env.RUNS ?? 10);
const root = fileURLToPath(new URL("..", import.meta.url));
const entryName = process.env.ENTRY ?? "src";
const entry =
  entryName === "dist"
    ? [join(root, "dist/cli/bin.js")]
    : entryName === "src"
      ? ["--conditions=simple-agent-loop-source", join(root, "src/cli/main.ts")]
      : [entryName];
const cases = (process.env.CASES ?? "cold,warm,floor").split(",");
const extraArgs = (process.env.ARGS ?? "").split(" ").filter(Boolean);

// The prompt, whatever styles and cursor moves surround it: the visible text ends in "> ".
function promptDrawn(output: string): boolean {
  const visible = output.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-_]/g, "");
  return /(^|[\r\n])[^\r\n]*> $/.test(visible);
}

/**
 * CPU time the process `pid` has run so far, its threads together, in milliseconds (Linux's
 * /proc/<pid>/task/<thread>/schedstat: nanoseconds on a CPU); 0 where there is no /proc. Unlike
 * the wall time it barely depends on what else the machine runs.
 */
function cpuTime(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/task`).reduce(
      (sum, thread) => sum + Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, "utf8").split(" ")[0]) / 1e6,
      0,
    );
  } catch {
    return 0;
  }
}

type Start = { wall: number; cpu: number };

/** Milliseconds from spawning `args` in a pseudo-terminal to its prompt: wall time, and the CPU time it took. */
async function startOnce(args: string[], workspace: string, home: string): Promise<Start> {
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    name: "xterm-256color",
    cols: 120,
    rows: 40,
    cwd: workspace,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      SIMPLE_AGENT_LOOP_HOME: home,
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
      TERM: "xterm-256color",
    },
  });
  let output = "";
  const exited = new Promise<number>((resolve) => child.onExit(({ exitCode }) => resolve(exitCode)));
  const elapsed = await new Promise<Start>((resolve, reject) => {
    child.onData((data) => {
      output += data;
      if (promptDrawn(output)) resolve({ wall: performance.now() - started, cpu: cpuTime(child.pid) });
    });
    void exited.then((code) => reject(new Error(`exited with ${code} before its prompt:\n${output}`)));
  });
  child.write("\x04");
  await exited;
  return elapsed;
}

function summary(name: string, starts: Start[]): string {
  const sorted = (values: number[]): number[] => [...values].sort((a, b) => a - b);
  const wall = sorted(starts.map((start) => start.wall));
  const cpu = sorted(starts.map((start) => start.cpu));
  const median = (values: number[]): string => values[Math.floor(values.length / 2)]!.toFixed(0);
  const p90 = wall[Math.min(wall.length - 1, Math.floor(0.9 * wall.length))]!;
  return `${name.padEnd(6)} median ${median(wall)} ms, min ${wall[0]!.toFixed(0)} ms, p90 ${p90.toFixed(0)} ms; CPU median ${median(cpu)} ms, min ${cpu[0]!.toFixed(0)} ms`;
}

const workspace = mkdtempSync(join(tmpdir(), "cli-start-ws-"));
const homes: string[] = [];
const freshHome = (): string => {
  const home = mkdtempSync(join(tmpdir(), "cli-start-home-"));
  homes.push(home);
  return home;
};
const cli = [...entry, "--model", "gpt-4.1-mini", ...extraArgs];
const floorScript = join(workspace, ".floor.mjs");
writeFileSync(
  floorScript,
  'import { createInterface } from "node:readline";\n' +
    "const lines = createInterface({ input: process.stdin, output: process.stdout });\n" +
    'lines.setPrompt("> ");\nlines.prompt();\nlines.on("close", () => process.exit(0));\n',
);
try {
  console.log(
    `CLI start to first prompt (${entryName}${extraArgs.length > 0 ? ` ${extraArgs.join(" ")}` : ""}), ${runs} runs a case, load ${loadavg()
      .map((load) => load.toFixed(2))
      .join(" ")} (target < 150 ms)`,
  );
  await startOnce(cli, workspace, freshHome()); // the file system cache, not measured
  const measured: Record<string, () => Promise<Start>> = {
    cold: () => startOnce(cli, workspace, freshHome()),
    warm: (() => {
      const home = freshHome();
      let first: Promise<Start> | undefined = startOnce(cli, workspace, home);
      return async () => {
        if (first !== undefined) await first;
        first = undefined;
        return startOnce(cli, workspace, home);
      };
    })(),
    floor: () => startOnce([floorScript], workspace, freshHome()),
  };
  const times: Record<string, Start[]> = {};
  // Cases alternate run by run, so that a change in the machine's load falls on all of them.
  for (let run = 0; run < runs; run++) for (const name of cases) (times[name] ??= []).push(await measured[name]!());
  for (const name of cases) console.log(summary(name, times[name]!));
} finally {
  rmSync(workspace, { recursive: true, force: true });
  for (const home of homes) rmSync(home, { recursive: true, force: true });
}
