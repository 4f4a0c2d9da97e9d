// A viewer in a process of its own, so that a test can measure its memory and CPU time alone.
// Serves the log or directory given by the first argument, with the ViewerOptions in JSON given by
// the second; prints its URL on the first line of stdout, then answers each line read from stdin
// with its resident memory and CPU time: {"rssBytes":…,"cpuMs":…}. Exits when stdin closes.
//   node --conditions=simple-agent-loop-source viewer-process.ts LOG '{"maxConnections":100}'
import { createInterface } from "node:readline";
import { serveViewer, type ViewerOptions } from "simple-agent-loop/viewer";

const viewer = await serveViewer(process.argv[2]!, JSON.parse(process.argv[3] ?? "{}") as ViewerOptions);
process.stdout.write(`${viewer.url}\n`);
const input = createInterface({ input: process.stdin });
input.on("line", () => {
  const cpu = process.cpuUsage();
  process.stdout.write(
    `${JSON.stringify({ rssBytes: process.memoryUsage().rss, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`,
  );
});
input.on("close", () => void viewer.close().then(() => process.exit(0)));
