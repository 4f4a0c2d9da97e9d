// How long the CLI takes from spawn to its first prompt, as a user starts it: the source entry
// (`src/cli/main.ts` under Node's type stripping, as `npm start` runs it) in a pseudo-terminal,
// timed until the prompt's "> " is printed; several runs, median and p90. Target: < 150 ms.
// Run: npm run cli-start (Node 24; RUNS=20 by default; ENTRY=dist for the built CLI). No model is called: the CLI is
// pointed at a closed local port, and leaves with Ctrl-D once the prompt is up.
import { spawn } from "@lydell/node-pty";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const runs = Number(process.env.RUNS ?? 20);
const root = fileURLToPath(new URL("..", import.meta.url));
// ENTRY=dist: the built CLI (`npm run build` first), as the installed package's bin runs it.
const entry =
  process.env.ENTRY === "dist"
    ? [join(root, "dist/cli/main.js")]
    : ["--conditions=simple-agent-loop-source", join(root, "src/cli/main.ts")];

async function startOnce(workspace: string, home: string): Promise<number> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [...entry, "--model", "gpt-4.1-mini", ...(process.env.ARGS ?? "").split(" ").filter(Boolean)],
    {
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
    },
  );
  let output = "";
  const elapsed = await new Promise<number>((resolve) => {
    child.onData((data) => {
      output += data;
      // The prompt, whatever styles and cursor moves surround it: the visible text ends in "> ".
      const visible = output.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-_]/g, "");
      if (/(^|[\r\n])[^\r\n]*> $/.test(visible)) resolve(performance.now() - started);
    });
  });
  const exited = new Promise<void>((resolve) => child.onExit(() => resolve()));
  child.write("\x04");
  await exited;
  return elapsed;
}

const workspace = mkdtempSync(join(tmpdir(), "cli-start-ws-"));
const home = mkdtempSync(join(tmpdir(), "cli-start-home-"));
try {
  await startOnce(workspace, home); // warm the file system cache
  const times: number[] = [];
  for (let run = 0; run < runs; run++) times.push(await startOnce(workspace, home));
  times.sort((a, b) => a - b);
  const at = (share: number): number => times[Math.min(times.length - 1, Math.floor(share * times.length))]!;
  console.log(
    `CLI start to first prompt (${process.env.ENTRY === "dist" ? "dist" : "src"}), ${runs} runs: median ${at(0.5).toFixed(0)} ms, p90 ${at(0.9).toFixed(0)} ms, min ${times[0]!.toFixed(0)} ms (target < 150 ms)`,
  );
} finally {
  rmSync(workspace, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}
