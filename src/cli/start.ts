// `npm start`: the CLI with `--provider auto` (a live model when one is configured, else the
// offline demo), on the demo task unless a task is given: `npm start -- "list the docs folder"`
// runs that task instead, and other options go through as given. As in main.ts, the compile
// cache goes on before the CLI's modules are imported (under type stripping it keeps the
// stripped sources too: a second start takes about a third of the CPU time of the first).
import { enableCompileCache } from "./compile-cache.ts";

enableCompileCache(process.env);
const { parseCliArgs } = await import("./args.ts");
const { runOnProcess } = await import("./run-process.ts");

const demoTask = "What is in this workspace?";

// The CLI's arguments for `npm start` with `given` after `--`.
function startArgs(given: readonly string[]): string[] {
  // First, so that a --provider given wins (the last one counts).
  const argv = ["--provider", "auto", ...given];
  let hasTask = true;
  try {
    const parsed = parseCliArgs(argv);
    hasTask = parsed.command !== "run" || parsed.task !== undefined;
  } catch {
    // A usage error: the CLI says what it is.
  }
  return hasTask ? argv : [...argv, demoTask];
}

await runOnProcess(startArgs(process.argv.slice(2)));
