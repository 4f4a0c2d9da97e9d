// The viewer server of the viewer benchmark (viewer.ts), in its own process so that its CPU time
// is its own. Prints its URL on the first line of stdout; each line read from stdin is answered
// with the CPU time (ms, user + system) used and the response body bytes written since it started
// listening. The viewer module is the package's, or the one at the second argument (another
// checkout's src/viewer/index.ts, to compare).
//   node --conditions=simple-agent-loop-source viewer-server.ts LOG [VIEWER_MODULE]
import { ServerResponse } from "node:http";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import type { serveViewer as ServeViewer } from "simple-agent-loop/viewer";

const module = process.argv[3] === undefined ? "simple-agent-loop/viewer" : pathToFileURL(process.argv[3]).href;
const { serveViewer } = (await import(module)) as { serveViewer: typeof ServeViewer };

let bytesWritten = 0;
const count = (chunk: unknown): void => {
  if (typeof chunk === "string") bytesWritten += Buffer.byteLength(chunk);
  else if (chunk instanceof Uint8Array) bytesWritten += chunk.byteLength;
};
const { write, end } = ServerResponse.prototype;
ServerResponse.prototype.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
  count(chunk);
  return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
} as typeof write;
ServerResponse.prototype.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
  if (typeof chunk !== "function") count(chunk);
  return (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
} as typeof end;

const viewer = await serveViewer(process.argv[2]!);
const started = process.cpuUsage();
process.stdout.write(`${viewer.url}\n`);
const input = createInterface({ input: process.stdin });
input.on("line", () => {
  const used = process.cpuUsage(started);
  process.stdout.write(`${JSON.stringify({ cpuMs: (used.user + used.system) / 1000, bytesWritten })}\n`);
});
// stdin closed: the benchmark is done with us (a --cpu-prof profile is written on a normal exit).
input.on("close", () => void viewer.close().then(() => process.exit(0)));
