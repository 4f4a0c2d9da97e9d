// simple-agent-loop/http under load, in one process: 200 concurrent streamed runs on the
// zero-latency scripted model, each served by a run registry over node:http and read by a fetch
// client with readEventStream. Reports events/s, the latency from an event's emission to its
// reading by the client (p50, p99), and memory; then a client that does not read, against
// eventStreamResponse's bounded buffer. Run from the repository root:
//   node --expose-gc --conditions=simple-agent-loop-source bench/http.ts [runs] [turns]
// (it imports the sources, so it needs no build nor the bench folder's install)
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { agentStream, initSession, tool, type AgentEvent, type ModelMessage } from "../src/index.ts";
import { createRunRegistry, eventStreamResponse, readEventStream } from "../src/http/index.ts";
import { scriptedModel } from "../src/testing/index.ts";
import { sendWebResponse, toWebRequest } from "../examples/web-chat/node-adapter.ts";

const runs = Number(process.argv[2] ?? 200);
const turns = Number(process.argv[3] ?? 5);
const words = 40;

const echo = tool({
  name: "echo",
  description: "echoes",
  inputSchema: { type: "object" },
  handler: (input) => input,
});

function script(): ModelMessage[][] {
  const text = Array.from({ length: words }, (_, index) => `word${index}`).join(" ");
  const script: ModelMessage[][] = [];
  for (let turn = 1; turn < turns; turn++)
    script.push([
      { role: "assistant", content: text },
      { type: "tool_call", id: `c${turn}`, name: "echo", input: { turn } },
    ]);
  script.push([{ role: "assistant", content: text }]);
  return script;
}

const megabytes = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

async function concurrentRuns(): Promise<void> {
  const registry = createRunRegistry();
  const emitted = new Map<string, number[]>();
  const server = createServer((incoming, outgoing) => {
    const request = toWebRequest(incoming, outgoing, "http://localhost");
    const runId = new URL(request.url).pathname.slice(1);
    void Promise.resolve(registry.response(runId, request)).then((response) => sendWebResponse(response, outgoing));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  gc();
  const baseline = process.memoryUsage();
  let peakHeap = baseline.heapUsed;
  let peakRss = baseline.rss;
  const sampler = setInterval(() => {
    const usage = process.memoryUsage();
    peakHeap = Math.max(peakHeap, usage.heapUsed);
    peakRss = Math.max(peakRss, usage.rss);
  }, 20);
  const latencies: number[] = [];
  let events = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: runs }, async (_, index) => {
      const times: number[] = [];
      const runId = `run-${index}`;
      emitted.set(runId, times);
      const stream = agentStream(scriptedModel(script(), { stream: true }), [echo], initSession("s", "u"), {
        onEvent: () => void times.push(performance.now()),
      });
      registry.start(stream, { runId });
      let seen = 0;
      for await (const event of readEventStream(await fetch(`http://127.0.0.1:${port}/${runId}`))) {
        latencies.push(performance.now() - times[seen++]!);
        events++;
        void (event satisfies AgentEvent);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  latencies.sort((a, b) => a - b);
  const percentile = (p: number): string =>
    latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!.toFixed(1);
  gc();
  const after = process.memoryUsage();
  console.log(
    `${runs} concurrent runs x ${turns} turns (${words} deltas a turn), registry over node:http, fetch + readEventStream:`,
  );
  console.log(`  ${events} events in ${seconds.toFixed(2)} s: ${Math.round(events / seconds)} events/s`);
  console.log(
    `  emission-to-read latency: p50 ${percentile(0.5)} ms, p99 ${percentile(0.99)} ms, max ${percentile(1)} ms`,
  );
  console.log(
    `  memory: heap ${megabytes(baseline.heapUsed)} -> peak ${megabytes(peakHeap)} (+${megabytes(peakHeap - baseline.heapUsed)}), ` +
      `kept runs after gc +${megabytes(after.heapUsed - baseline.heapUsed)} (${((after.heapUsed - baseline.heapUsed) / runs / 1024).toFixed(0)} KB a run); rss peak ${megabytes(peakRss)}`,
  );
  server.closeAllConnections();
  server.close();
}

// A client that never reads a run of ~4 MB of deltas: what the server holds for it.
async function slowClient(maxBufferedBytes: number | undefined): Promise<void> {
  const text = "x".repeat(19) + " ";
  const long = text.repeat(200_000);
  gc();
  const before = process.memoryUsage().heapUsed;
  const session = initSession("s", "u");
  const stream = agentStream(scriptedModel([[{ role: "assistant", content: long }]], { stream: true }), [], session);
  const response = eventStreamResponse(stream, maxBufferedBytes === undefined ? {} : { maxBufferedBytes });
  await stream.result;
  gc();
  const held = process.memoryUsage().heapUsed - before;
  const label =
    maxBufferedBytes === Number.POSITIVE_INFINITY
      ? "unbounded (Infinity)"
      : `maxBufferedBytes ${megabytes(maxBufferedBytes ?? 1024 * 1024)}`;
  console.log(
    `  ${label}: a client that has read nothing costs +${megabytes(held)} of heap at the run's end (its text: ${megabytes(long.length)})`,
  );
  await response.body?.cancel();
}

await concurrentRuns();
console.log("A client that does not read (eventStreamResponse, one run streaming 200,000 deltas):");
await slowClient(undefined);
await slowClient(Number.POSITIVE_INFINITY);
