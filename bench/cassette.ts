// What a cassette costs and saves: one suite of agent runs against a model with a live model's
// latency, recorded once, then replayed from the files. Run: node bench/cassette.ts (Node 24).
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentLoop, initSession, tool, type ModelMessage } from "../src/index.ts";
import { cassette, scriptedModel } from "../src/testing/index.ts";

const runs = Number(process.env.RUNS ?? 10);
const turnsPerRun = 6;
const latencyMs = Number(process.env.LATENCY_MS ?? 700); // a live model's typical time per turn
const outputBytes = 4_000; // each tool result

const read = tool({
  name: "read",
  description: "Read a file.",
  inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  handler: (input) => `${String(input.path)}: ${"x".repeat(outputBytes)}`,
});

function liveLike() {
  const turns = [];
  for (let turn = 0; turn < turnsPerRun - 1; turn++) {
    const call: ModelMessage = {
      type: "tool_call",
      id: `call_${turn}`,
      name: "read",
      input: { path: `src/file-${turn}.ts` },
    };
    turns.push({ messages: [call], delay: latencyMs });
  }
  turns.push({ messages: [{ role: "assistant", content: "Done." } as ModelMessage], delay: latencyMs });
  return scriptedModel(turns, { stream: true });
}

const folder = mkdtempSync(join(tmpdir(), "sal-cassette-bench-"));
async function suite(mode: "record" | "replay"): Promise<number> {
  const started = performance.now();
  await Promise.all(
    Array.from({ length: runs }, (_, index) =>
      agentLoop(
        cassette(liveLike(), { path: join(folder, `run-${index}.jsonl`), mode }),
        [read],
        initSession("s", `task ${index}`),
      ),
    ),
  );
  return performance.now() - started;
}

const recordMs = await suite("record");
const replayMs = await suite("replay");
const bytes = statSync(join(folder, "run-0.jsonl")).size;
console.log(
  `${runs} runs x ${turnsPerRun} model calls at ${latencyMs} ms per call: recorded (live) ${(recordMs / 1000).toFixed(2)} s, replayed ${replayMs.toFixed(0)} ms; one cassette ${(bytes / 1024).toFixed(1)} KB`,
);
