// What code mode saves: 50 lookups of about 1 KB each, then a filter to the few that matter.
//
//   node --expose-gc --conditions=simple-agent-loop-source code-mode.ts      (from bench/; no build needed)
//
// The same task three ways through the real loop, each request billed as context.ts bills it
// (the Anthropic adapter's request, tokens as characters / 4, prompt caching: reads 0.1x, writes
// 1.25x, see scripted-coding.ts): direct (50 calls in one turn, then the answer), one per turn
// (50 turns of one call), and code mode (one run_code call whose program makes the 50 calls and
// returns the filtered list). Then the isolate alone: the first program (load and compile of the
// WebAssembly), a later program's start, a 200-call program, and the process's memory after it.
import { performance } from "node:perf_hooks";
import {
  agentLoop,
  codeModeName,
  initSession,
  tool,
  type InvokeModel,
  type ModelMessage,
  type ToolCallMessage,
} from "../src/index.ts";
import { anthropicCacheBilling, emptyBilling, format, type Billing } from "./scripted-coding.ts";

const lookups = 50;
const record = (index: number): Record<string, unknown> => ({
  id: `order-${index}`,
  status: index % 10 === 0 ? "failed" : "shipped",
  notes: `Order ${index}: ${"lorem ipsum dolor sit amet, ".repeat(32)}`,
});
const lookup = tool({
  name: "lookup_order",
  description: "Looks an order up by its id.",
  inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
  handler: (input) => record(Number(String(input.id).slice("order-".length))),
});
const call = (index: number, name = "lookup_order"): ToolCallMessage => ({
  type: "tool_call",
  id: `call_${index}`,
  name,
  input: { id: `order-${index}` },
});
const answer: ModelMessage = { role: "assistant", content: "Failed: order-0, order-10, order-20, order-30, order-40." };
const program = [
  "const orders = [];",
  `for (let i = 0; i < ${lookups}; i++) orders.push(await tools.lookup_order({ id: 'order-' + i }));`,
  "return orders.filter((order) => order.status === 'failed').map((order) => order.id);",
].join("\n");

type Way = { name: string; turns: ModelMessage[][]; codeMode: boolean };
const ways: Way[] = [
  {
    name: "direct, one turn",
    turns: [Array.from({ length: lookups }, (_, index) => call(index)), [answer]],
    codeMode: false,
  },
  {
    name: "direct, one per turn",
    turns: [...Array.from({ length: lookups }, (_, index) => [call(index)]), [answer]],
    codeMode: false,
  },
  {
    name: "code mode, one program",
    turns: [[{ type: "tool_call", id: "call_p", name: codeModeName, input: { code: program } }], [answer]],
    codeMode: true,
  },
];

async function measure(way: Way): Promise<Billing> {
  const totals = emptyBilling();
  const bill = anthropicCacheBilling(totals, 200_000);
  let turn = 0;
  const model: InvokeModel = (sent, session) => {
    const usage = { inputTokens: bill(sent, session), outputTokens: 60 };
    const messages = way.turns[turn++]!;
    return messages.map((message, index) => (index === messages.length - 1 ? { ...message, usage } : message));
  };
  await agentLoop(model, [lookup], initSession("You answer questions about orders.", "Which orders failed?"), {
    codeMode: way.codeMode,
    maxIterations: lookups + 5,
  });
  return totals;
}

// First, before any other program of this process: the load and compile of the WebAssembly.
const first = await runProgram("return 1;");
const rows: string[] = [];
const results: Record<string, Billing> = {};
for (const way of ways) {
  const totals = await measure(way);
  results[way.name] = totals;
  rows.push(
    `| ${way.name} | ${totals.calls} | ${format(totals.input)} | ${format(totals.peak)} | ${format(Math.round(totals.billed))} |`,
  );
}
console.log("| way | model calls | input tokens | peak prompt | billed input (cached) |");
console.log("| --- | ---: | ---: | ---: | ---: |");
for (const row of rows) console.log(row);
const program_ = results["code mode, one program"]!;
for (const name of ["direct, one turn", "direct, one per turn"]) {
  const direct = results[name]!;
  console.log(
    `code mode against ${name}: ${((1 - program_.input / direct.input) * 100).toFixed(1)}% fewer input tokens, ${((1 - program_.billed / direct.billed) * 100).toFixed(1)}% less billed input`,
  );
}

// The isolate alone, through a one-turn run each time.
async function runProgram(code: string): Promise<number> {
  let turn = 0;
  const model: InvokeModel = () =>
    turn++ === 0 ? [{ type: "tool_call", id: "call_p", name: codeModeName, input: { code } }] : [answer];
  const started = performance.now();
  await agentLoop(model, [lookup], initSession("s", "u"), { codeMode: true });
  return performance.now() - started;
}
const starts: number[] = [];
for (let index = 0; index < 20; index++) starts.push(await runProgram("return 1;"));
starts.sort((a, b) => a - b);
const calls200 = await runProgram(
  "let n = 0; for (let i = 0; i < 200; i++) { await tools.lookup_order({ id: 'order-' + i }); n++; } return n;",
);
globalThis.gc?.();
const memory = process.memoryUsage();
console.log(`first program (load + compile): ${first.toFixed(0)} ms`);
console.log(`a later program (median of 20 one-turn runs): ${starts[10]!.toFixed(1)} ms`);
console.log(`a 200-call program: ${calls200.toFixed(0)} ms`);
console.log(
  `memory after: rss ${(memory.rss / 2 ** 20).toFixed(0)} MB, heap ${(memory.heapUsed / 2 ** 20).toFixed(0)} MB`,
);
