// What a long coding task costs in input tokens, with prompt caching on and off, under each
// compaction strategy; and what cutting in batches saves.
//
//   node --conditions=simple-agent-loop-source cost.ts      (from bench/; no build needed)
//
// A scripted 60-turn coding session through the real loop: each turn the model thinks (a signed
// block of 200-1,200 characters) and reads a file (2-40 KB), greps (1-8 KB), edits (an input of
// 200-4,000 characters) or runs the tests (a 3-30 KB log); each output hides one fact
// (`FACT-<turn>-<n>`) in its middle. Every request is built by the Anthropic adapter's own
// converter (`toAnthropicRequest`, breakpoints where the adapter puts them) and billed the way
// the API bills: a request reads the longest prefix cached at a block boundary up to 20 blocks
// before one of its breakpoints (0.1x), writes the rest up to its last breakpoint (1.25x), pays
// 1x for anything after it; without caching every token is 1x. Tokens: a token per 4 characters
// of each block's JSON. Per strategy: the input tokens billed with and without caching, the
// share read from the cache, the peak prompt, and how many facts the model can still reach at
// the end (in the session, or through recall_output).
//
// Then the same session under an `approvalPolicy` whose classifier is `llmJudge` (no rules, so it
// is asked about every call): the judge's own request built by the same converter, its tokens per
// call counted the same way, against the agent's.
import {
  agentLoop,
  clearToolResults,
  createCompactor,
  initSession,
  llmJudge,
  slidingWindow,
  summarizeOlderTurns,
  tool,
  type AgentLoopOptions,
  type CompactionStrategy,
  type InvokeModel,
  type ModelMessage,
} from "../src/index.ts";
import {
  anthropicCacheBilling,
  emptyBilling,
  format,
  outputWithFact,
  random,
  reachableFacts,
  scriptedSummarizer,
  tokensOf,
} from "./scripted-coding.ts";

const turns = 60;
const contextWindow = 200_000;

type Step = { tool: "read" | "grep" | "edit" | "bash"; input: Record<string, string>; size: number; fact: string };

const next = random(7);
const between = (low: number, high: number): number => low + Math.floor(next() * (high - low));
const steps: Step[] = Array.from({ length: turns }, (_, turn): Step => {
  const fact = `FACT-${turn}-${between(0, 1e6)}`;
  const path = `src/module-${turn % 17}.ts`;
  const pick = next();
  if (turn % 7 === 6) return { tool: "bash", input: { command: "npm test" }, size: between(3_000, 30_000), fact };
  if (pick < 0.3) {
    const code = "  const value = compute(input); // changed\n".repeat(between(5, 95));
    return {
      tool: "edit",
      input: { path, old_string: code, new_string: code.replace(/value/g, "result") },
      size: 40,
      fact,
    };
  }
  if (pick < 0.5) return { tool: "grep", input: { pattern: `symbol${turn}` }, size: between(1_000, 8_000), fact };
  return { tool: "read", input: { path }, size: between(2_000, 40_000), fact };
});
const thinking = steps.map((step, turn) =>
  `Step ${turn}: the ${step.tool} should tell me where the parser goes wrong. `.repeat(between(3, 18)),
);

// Output of `size` characters in lines, the fact in the middle.
function output(step: Step, turn: number): string {
  if (step.tool === "edit") return `Applied the edit to ${step.input.path} (${step.fact}).`;
  const line =
    step.tool === "bash" ? `  ✓ test ${turn} passes in 3 ms` : `  const value${turn} = compute(input); // code`;
  return outputWithFact(step.size, line, step.fact);
}

const tools = (["read", "grep", "edit", "bash"] as const).map((name) =>
  tool({
    name,
    description: { read: "Read a file.", grep: "Search the workspace.", edit: "Edit a file.", bash: "Run a command." }[
      name
    ],
    inputSchema: {
      type: "object",
      properties: Object.fromEntries(
        ["path", "pattern", "command", "old_string", "new_string"].map((key) => [key, { type: "string" }]),
      ),
    },
    handler: (_input, context) => {
      const turn = Number(context.id.slice("call_".length));
      return output(steps[turn]!, turn);
    },
  }),
);

let totals = emptyBilling();

// The agent: a signed thought and one tool call a turn as the script says, then the answer.
function agent(bill: ReturnType<typeof anthropicCacheBilling>): InvokeModel {
  let turn = -1;
  return (sent, session) => {
    const usage = { inputTokens: bill(sent, session), outputTokens: 60 };
    turn++;
    if (turn >= turns) return [{ role: "assistant", content: "Done: the parser is fixed and the tests pass.", usage }];
    const step = steps[turn]!;
    const messages: ModelMessage[] = [
      { type: "thinking", content: thinking[turn]!, signature: `signature-${turn}`, provider: "anthropic" },
      { type: "tool_call", id: `call_${turn}`, name: step.tool, input: step.input, usage },
    ];
    return messages;
  };
}

const summarizer = scriptedSummarizer(() => totals);
const facts = steps.map((step) => step.fact);

// Truncation (and clearing) as strategies, so that their batch can be chosen here.
const truncation = (batch: number): CompactionStrategy => {
  const compactor = createCompactor({ keepTurns: 2, batch });
  return (session) => {
    compactor(session);
  };
};

const strategies: [string, AgentLoopOptions][] = [
  ["none", { compaction: false, largeOutput: false }],
  ["truncation, every turn", { compaction: truncation(1), largeOutput: false }],
  ["truncation, in batches of 10", { compaction: truncation(10), largeOutput: false }],
  ["sliding window (20 turns)", { compaction: slidingWindow({ keepTurns: 20 }), largeOutput: false }],
  [
    "summary (200k window)",
    { compaction: summarizeOlderTurns({ invokeModel: summarizer, contextWindow }), largeOutput: false },
  ],
  ["truncation every turn + clearing + offloading", { compaction: [truncation(1), clearToolResults()] }],
  ["truncation in batches of 10 + clearing + offloading", { compaction: [truncation(10), clearToolResults()] }],
  ["the default (`compaction` not given)", {}],
];

console.log(
  `A ${turns}-turn coding session: ${["read", "grep", "edit", "bash"].map((name) => `${steps.filter((step) => step.tool === name).length} ${name}`).join(", ")}\n`,
);
console.log(
  "| strategy | billed input, cached | billed input, no caching | read from cache | peak prompt | facts reachable |",
);
console.log("|---|---:|---:|---:|---:|---:|");
for (const [name, options] of strategies) {
  totals = emptyBilling();
  const session = await agentLoop(
    agent(anthropicCacheBilling(totals, contextWindow)),
    tools,
    initSession("You are a careful coding agent working in a TypeScript repository.", "Fix the parser bug."),
    { ...options, maxIterations: turns + 5, loopGuard: false },
  );
  const reached = await reachableFacts(session, facts);
  const { input, billed, read, peak } = totals;
  console.log(
    `| ${name} | ${format(billed)} | ${format(input)} | ${Math.round((100 * read) / input)}% | ${format(peak)} | ${reached} / ${turns} |`,
  );
}

// The judge: each request measured as the agent's are (its own cache, since its prefix is its own),
// answering a short JSON verdict.
const judgeTotals = emptyBilling();
const judgeBill = anthropicCacheBilling(judgeTotals, contextWindow);
const judgeInputs: number[] = [];
const verdict = JSON.stringify({
  decision: "allow",
  reason: "An ordinary step of the task the user gave.",
  confidence: 0.9,
});
const judgeModel: InvokeModel = (sent, session) => {
  const inputTokens = judgeBill(sent, session);
  judgeInputs.push(inputTokens);
  return [{ role: "assistant", content: verdict, usage: { inputTokens, outputTokens: tokensOf(verdict.length) } }];
};
totals = emptyBilling();
await agentLoop(
  agent(anthropicCacheBilling(totals, contextWindow)),
  tools,
  initSession("You are a careful coding agent working in a TypeScript repository.", "Fix the parser bug."),
  { maxIterations: turns + 5, loopGuard: false, approvalPolicy: { classifier: llmJudge({ invokeModel: judgeModel }) } },
);
const sorted = [...judgeInputs].sort((first, second) => first - second);
const mean = judgeTotals.input / judgeInputs.length;
console.log(
  `\nThe judge (llmJudge, asked about every call, the default compaction): ${judgeInputs.length} calls; input tokens per call ${format(Math.round(mean))} mean (${format(sorted[0]!)}–${format(sorted.at(-1)!)}), output ${tokensOf(verdict.length)}; ${format(judgeTotals.input)} input tokens in all, ${format(judgeTotals.billed)} billed with caching: ${((100 * judgeTotals.input) / totals.input).toFixed(1)}% of the agent's ${format(totals.input)} input tokens (${((100 * judgeTotals.billed) / totals.billed).toFixed(1)}% of its ${format(totals.billed)} billed with caching).`,
);
