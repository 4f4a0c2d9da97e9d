/**
 * Runs one program in the isolate and prints how it ended as one JSON line: the limit tests start
 * it in a child process, so a limit that does not hold fails the test (the child is killed at the
 * test's deadline) instead of hanging it or exhausting its memory.
 * Arguments: the program, then JSON options (timeoutMs, memoryMb, maxCalls).
 */
import { runIsolated } from "../../src/tools/code-mode/isolate.ts";

const [code = "", optionsJson = "{}"] = process.argv.slice(2);
const options = JSON.parse(optionsJson) as { timeoutMs?: number; memoryMb?: number; maxCalls?: number };
const started = performance.now();
const end = await runIsolated({
  code,
  toolNames: ["echo"],
  call: async (_name, input) => ({ type: "settled", output: input, isError: false }),
  now: 0,
  seed: "child",
  timeoutMs: options.timeoutMs ?? 30_000,
  memoryMb: options.memoryMb ?? 64,
  maxCalls: options.maxCalls ?? 1000,
  signal: new AbortController().signal,
  stopCalls: new AbortController(),
});
const rssMb = Math.round(process.memoryUsage().rss / 1048576);
console.log(JSON.stringify({ end, ms: Math.round(performance.now() - started), rssMb }));
