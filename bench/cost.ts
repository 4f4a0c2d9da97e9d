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
import { createHash } from "node:crypto";
import {
  agentLoop,
  clearToolResults,
  createCompactor,
  initSession,
  keptOutput,
  slidingWindow,
  summarizeOlderTurns,
  tool,
  type AgentLoopOptions,
  type InvokeModel,
  type ModelMessage,
  type Session,
  type ToolSchema,
} from "../src/index.ts";
import { toAnthropicRequest } from "../src/providers/anthropic/anthropic.ts";

const turns = 60;
const contextWindow = 200_000;
const tokensOf = (characters: number): number => Math.ceil(characters / 4);

// A deterministic pseudo-random sequence, so every strategy sees the same script.
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

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
  const lines: string[] = [];
  let length = 0;
  for (let index = 0; length < step.size; index++) {
    const text = index === Math.floor(step.size / line.length / 2) ? `  // ${step.fact}` : `${line} ${index}`;
    lines.push(text);
    length += text.length + 1;
  }
  return lines.join("\n");
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

type Totals = { input: number; billed: number; read: number; peak: number; calls: number };
let totals: Totals = { input: 0, billed: 0, read: 0, peak: 0, calls: 0 };

// Anthropic's prompt cache, fed the adapter's own request bodies.
function createCache(): (tools: readonly ToolSchema[], session: Session) => number {
  const cached = new Set<string>();
  return (sent, session) => {
    const request = toAnthropicRequest(session, sent, { model: "claude-sonnet-4-5", maxTokens: 8_192 });
    const blocks: { text: string; breakpoint: boolean }[] = [];
    const add = (block: Record<string, unknown>, prefix = ""): void => {
      const { cache_control: mark, ...rest } = block;
      blocks.push({ text: prefix + JSON.stringify(rest), breakpoint: mark !== undefined });
    };
    for (const schema of request.tools ?? []) add(schema as Record<string, unknown>);
    for (const block of request.system ?? []) add(block as Record<string, unknown>);
    for (const message of request.messages)
      message.content.forEach((block, index) =>
        add(block as Record<string, unknown>, index === 0 ? `${message.role}:` : ""),
      );
    let key = "";
    let tokens = 0;
    const keys: string[] = [];
    const ends: number[] = [];
    for (const block of blocks) {
      key = createHash("sha1").update(key).update(block.text).digest("hex");
      tokens += tokensOf(block.text.length);
      keys.push(key);
      ends.push(tokens);
    }
    // The longest prefix cached at a boundary no more than 20 blocks before a breakpoint.
    let read = 0;
    let lastBreakpoint = -1;
    blocks.forEach((block, index) => {
      if (!block.breakpoint) return;
      lastBreakpoint = index;
      for (let back = index; back >= 0 && back >= index - 20; back--)
        if (cached.has(keys[back]!)) {
          read = Math.max(read, ends[back]!);
          break;
        }
    });
    for (const [index, block] of blocks.entries()) if (block.breakpoint) cached.add(keys[index]!);
    const written = lastBreakpoint < 0 ? 0 : Math.max(0, ends[lastBreakpoint]! - read);
    totals.calls++;
    totals.input += tokens;
    totals.read += read;
    totals.peak = Math.max(totals.peak, tokens);
    totals.billed += read * 0.1 + written * 1.25 + (tokens - read - written);
    return tokens;
  };
}

// The agent: a signed thought and one tool call a turn as the script says, then the answer.
function agent(bill: ReturnType<typeof createCache>): InvokeModel {
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

// The summarizer keeps what a summary keeps: the files and steps, not their contents. Its own
// call is billed too, uncached.
const summarizer: InvokeModel = (_tools, session) => {
  const transcript = session.messages.map((message) => ("content" in message ? message.content : "")).join("\n");
  const files = [...new Set(transcript.match(/src\/module-\d+\.ts/g) ?? [])];
  totals.input += tokensOf(transcript.length);
  totals.billed += tokensOf(transcript.length);
  return [{ role: "assistant", content: `Fixing the parser. Files read: ${files.join(", ")}. Tests were run.` }];
};

async function reachableFacts(session: Session): Promise<number> {
  const text = JSON.stringify(session.messages);
  let reachable = 0;
  for (const [turn, step] of steps.entries()) {
    const kept = await keptOutput(session, `call_${turn}`);
    if (text.includes(step.fact) || (typeof kept === "string" && kept.includes(step.fact))) reachable++;
  }
  return reachable;
}

// Truncation (and clearing) as strategies, so that their batch can be chosen here.
const truncation = (batch: number): AgentLoopOptions["compaction"] => {
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
  totals = { input: 0, billed: 0, read: 0, peak: 0, calls: 0 };
  const session = await agentLoop(
    agent(createCache()),
    tools,
    initSession("You are a careful coding agent working in a TypeScript repository.", "Fix the parser bug."),
    { ...options, maxIterations: turns + 5, loopGuard: false },
  );
  const facts = await reachableFacts(session);
  const { input, billed, read, peak } = totals;
  console.log(
    `| ${name} | ${format(Math.round(billed))} | ${format(input)} | ${Math.round((100 * read) / input)}% | ${format(peak)} | ${facts} / ${turns} |`,
  );
}

function format(count: number): string {
  return count.toLocaleString("en-US");
}
