// `npm start`: the CLI with `--provider auto` (a live model when one is configured, else the
// offline demo). `npm start -- "list the docs folder"` runs that task, and other options go
// through as given. Without a task, on a terminal or with `--resume`, it opens the interactive
// prompt (the CLI reads the task from stdin when that is not a terminal); without a task, a
// terminal or `--resume` (a script, CI), it runs the demo task. The commands the CLI prints start
// with `npm start --`: npm runs this from the package's root, wherever in the clone it was typed. As in main.ts, the compile
// cache goes on before the CLI's modules are imported (under type stripping it keeps the
// stripped sources too: a second start takes about a third of the CPU time of the first).
import { enableCompileCache } from "./compile-cache.ts";

enableCompileCache(process.env);
const { parseCliArgs } = await import("./args.ts");
const { runOnProcess } = await import("./run-process.ts");

const demoTask = "What is in this workspace?";

// The CLI's arguments for `npm start` with `given` after `--`.
function startArgs(given: readonly string[], terminal: boolean): string[] {
  // First, so that a --provider given wins (the last one counts).
  const argv = ["--provider", "auto", ...given];
  let demo = false;
  try {
    const parsed = parseCliArgs(argv);
    demo = parsed.command === "run" && parsed.task === undefined && parsed.resume === undefined && !terminal;
  } catch {
    // A usage error: the CLI says what it is.
  }
  // After `--`, so that the task is never read as an option or as --resume's id.
  return demo ? [...argv, ...(given.includes("--") ? [] : ["--"]), demoTask] : argv;
}

await runOnProcess(startArgs(process.argv.slice(2), process.stdin.isTTY), "npm start --");
