// A child process for the crash tests: runs the crash agent on a session file and, at the point
// given, says so on stdout and blocks (so the parent's SIGKILL lands exactly there). It also says
// when the session file is open, for kills timed from there.
//   node --conditions=simple-agent-loop-source test/store/crash-child.ts <session> <effects> [point]
// Points: model:<turn>, start:<call id>, effect:<call id>, tear:<call id> (writes the first bytes
// of a result line, as a write cut short), result:<n> (after the n-th result of this run),
// message:<n> (after the n-th message the loop adds in this run), none.
import { appendFileSync, writeSync } from "node:fs";
import { runCrashAgent } from "./crash-agent.ts";

const [sessionPath, effectsPath, point = "none"] = process.argv.slice(2);
if (sessionPath === undefined || effectsPath === undefined)
  throw new Error("usage: crash-child.ts <session> <effects> [point]");
const [kind, argument] = point.split(":");

function stop(): void {
  writeSync(1, `${JSON.stringify({ stopped: point })}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20_000);
  process.exit(3);
}

let messages = 0;
let results = 0;
await runCrashAgent(sessionPath, effectsPath, {
  opened: () => writeSync(1, `${JSON.stringify({ opened: true })}\n`),
  modelCall: (turn) => {
    if (kind === "model" && turn === Number(argument)) stop();
  },
  toolStart: (id) => {
    if (kind === "start" && id === argument) stop();
  },
  toolEffect: (id) => {
    if (kind === "effect" && id === argument) stop();
    if (kind === "tear" && id === argument) {
      appendFileSync(sessionPath, `{"type":"message","message":{"type":"tool_result","id":"${id}","output":{"n":`);
      stop();
    }
  },
  message: (message) => {
    messages++;
    const isResult = "type" in message && message.type === "tool_result";
    if (isResult) results++;
    if (
      (kind === "message" && messages === Number(argument)) ||
      (kind === "result" && isResult && results === Number(argument))
    )
      stop();
  },
});
writeSync(1, `${JSON.stringify({ done: true })}\n`);
