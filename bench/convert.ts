// Conversion cost per model call as the session grows, and streaming overhead per event.
//
//   npm run convert            (after `npm run build` in the repository root)
//
// 1. For sessions of 10 to 10,000 messages: the time to convert the whole session to an Anthropic
//    Messages request and serialize it (what the adapter does before every call).
// 2. For a recorded SSE stream repeated to ~20,000 events: the adapter's parse into model stream
//    events, against a bare parse of the same bytes (split lines, JSON.parse each data line).
import { readFileSync } from "node:fs";
import { extendSession, initSession, type Session } from "simple-agent-loop";
import { streamMessages, toAnthropicRequest } from "simple-agent-loop/anthropic";
import { parseSseBatches } from "../src/providers/sse.ts";

function sessionOf(size: number): Session {
  const session = initSession("You are a careful coding agent.", "Refactor the parser and run the tests.");
  for (let turn = 0; session.messages.length < size; turn++) {
    extendSession(session, { role: "assistant", content: `Step ${turn}: ${"reasoning about the code ".repeat(8)}` });
    extendSession(session, {
      type: "tool_call",
      id: `toolu_${turn}`,
      name: "read",
      input: { path: `src/file-${turn}.ts` },
    });
    extendSession(session, {
      type: "tool_result",
      id: `toolu_${turn}`,
      output: `export const value${turn} = ${turn};\n`.repeat(12),
    });
  }
  session.messages.length = size;
  return session;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function time(run: () => void, budgetMs = 400): number {
  for (let i = 0; i < 5; i++) run();
  const samples: number[] = [];
  const start = performance.now();
  while (performance.now() - start < budgetMs || samples.length < 5) {
    const begin = performance.now();
    run();
    samples.push(performance.now() - begin);
  }
  return median(samples);
}

console.log("Conversion per model call (toAnthropicRequest + JSON.stringify), Anthropic Messages API");
console.log("messages   µs/call   µs/message   body KB");
const tools = [
  {
    name: "read",
    description: "Read a file.",
    input_schema: { type: "object", properties: { path: { type: "string" } } },
  },
];
for (const size of [10, 100, 1000, 10_000]) {
  const session = sessionOf(size);
  let bytes = 0;
  const ms = time(() => {
    bytes = JSON.stringify(toAnthropicRequest(session, tools, { model: "claude-sonnet-4-5" })).length;
  });
  console.log(
    `${String(size).padStart(8)}  ${(ms * 1000).toFixed(1).padStart(8)}  ${((ms * 1000) / size).toFixed(3).padStart(11)}  ${(bytes / 1024).toFixed(0).padStart(8)}`,
  );
}

const recorded = readFileSync(
  new URL("../test/fixtures/anthropic/anthropic-sdk-python__tool_use_response.txt", import.meta.url),
  "utf8",
);
const body = recorded.repeat(1);
const perResponseEvents = body.split("\n\n").filter((part) => part.includes("data:")).length;
const repeats = Math.ceil(20_000 / perResponseEvents);
const bytes = new TextEncoder().encode(body);

function bareParse(): number {
  let events = 0;
  for (let r = 0; r < repeats; r++) {
    const text = new TextDecoder().decode(bytes);
    for (const line of text.split("\n")) {
      if (line.startsWith("data: ")) {
        JSON.parse(line.slice(6));
        events++;
      }
    }
  }
  return events;
}

async function adapterParse(): Promise<number> {
  let events = 0;
  for (let r = 0; r < repeats; r++) {
    const stream = streamMessages(async () => new Response(new Blob([bytes]).stream()));
    for await (const _event of stream) events++;
  }
  return events;
}

// parseSse alone, over one body holding every repeat (no per-response setup).
const allBytes = new TextEncoder().encode(`${body.trimEnd()}\n\n`.repeat(repeats));
async function sseOnly(): Promise<number> {
  let events = 0;
  for await (const batch of parseSseBatches(new Blob([allBytes]).stream())) {
    for (const event of batch) {
      JSON.parse(event.data);
      events++;
    }
  }
  return events;
}

for (let i = 0; i < 3; i++) {
  await sseOnly();
  bareParse();
  await adapterParse();
}
const bareSamples: number[] = [];
const adapterSamples: number[] = [];
const sseSamples: number[] = [];
let sseEvents = 0;
for (let i = 0; i < 9; i++) {
  let start = performance.now();
  sseEvents = bareParse();
  bareSamples.push(performance.now() - start);
  start = performance.now();
  await adapterParse();
  adapterSamples.push(performance.now() - start);
  start = performance.now();
  await sseOnly();
  sseSamples.push(performance.now() - start);
}
const bare = (median(bareSamples) * 1000) / sseEvents;
const adapter = (median(adapterSamples) * 1000) / sseEvents;
console.log(`\nStreaming: ${sseEvents} SSE events (a recorded Anthropic tool-use stream, ${repeats}x)`);
console.log(`bare parse (split + JSON.parse): ${bare.toFixed(2)} µs/event`);
console.log(`parseSseBatches + JSON.parse, one body: ${((median(sseSamples) * 1000) / sseEvents).toFixed(2)} µs/event`);
console.log(
  `adapter (parseSse + streamMessages): ${adapter.toFixed(2)} µs/event  (overhead ${(adapter - bare).toFixed(2)} µs/event)`,
);
