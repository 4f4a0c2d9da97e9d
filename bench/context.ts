// What a long coding task costs under each context strategy, and what many MCP tools cost a request.
//
//   node --conditions=simple-agent-loop-source context.ts      (from bench/; no build needed)
//
// 1. A scripted 100-turn coding session through the real loop: each turn the model reads a file
//    (2-60 KB), greps (5-20 KB) or runs the tests (a 200 KB log), and every output hides one fact
//    (`FACT-<turn>-<n>`) in its middle, as real outputs hide the line that matters. Each strategy
//    runs the same script: none, truncation (the default before), summary (summarizeOlderTurns,
//    200k window, a scripted summarizer that keeps file names but no contents), clearing
//    (clearToolResults), clearing + offloading (with largeOutput). Per strategy: the peak prompt,
//    the total input tokens, the billed input-token equivalents under Anthropic prompt caching
//    (each request built by the Anthropic adapter's converter and billed as cost.ts bills it:
//    reads 0.1x, writes 1.25x, see scripted-coding.ts), the calls over a 200k window, and how
//    many of the facts are still reachable at the end (in the session, or through recall_output).
// 2. 200 MCP-style tools (realistic schemas: 4-12 parameters with descriptions): request size per
//    call with all tools sent against deferred + search_tools (five loaded).
//
// Tokens are estimated as compaction estimates them: a token per 4 characters of JSON.
import {
  agentLoop,
  clearToolResults,
  initSession,
  summarizeOlderTurns,
  tool,
  type AgentLoopOptions,
  type InvokeModel,
  type ModelMessage,
  type ToolSchema,
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

const turns = 100;
const contextWindow = 200_000;

type Step = { tool: "read" | "grep" | "test"; input: { path?: string; pattern?: string }; size: number; fact: string };

function script(): Step[] {
  const next = random(42);
  return Array.from({ length: turns }, (_, turn): Step => {
    const fact = `FACT-${turn}-${Math.floor(next() * 1e6)}`;
    const pick = next();
    if (turn % 10 === 9) return { tool: "test", input: {}, size: 200_000, fact };
    if (pick < 0.25)
      return { tool: "grep", input: { pattern: `symbol${turn}` }, size: 5_000 + Math.floor(next() * 15_000), fact };
    return { tool: "read", input: { path: `src/module-${turn}.ts` }, size: 2_000 + Math.floor(next() * 58_000), fact };
  });
}

// Output of `size` characters in lines, the fact in the middle.
function output(step: Step, turn: number): string {
  const line =
    step.tool === "test"
      ? `  ✓ test ${turn} passes in 3 ms`
      : `  const value${turn} = compute(input, ${turn}); // code`;
  return outputWithFact(step.size, line, step.fact);
}

const steps = script();
const tools = (["read", "grep", "test"] as const).map((name) =>
  tool({
    name,
    description: { read: "Read a file.", grep: "Search the workspace.", test: "Run the tests." }[name],
    inputSchema: { type: "object", properties: { path: { type: "string" }, pattern: { type: "string" } } },
    handler: (_input, context) => {
      const turn = Number(context.id.slice("call_".length));
      return output(steps[turn]!, turn);
    },
  }),
);

let billingTotals = emptyBilling();

// The agent: one tool call a turn as the script says, with a line of reasoning, then the answer.
function agent(bill: ReturnType<typeof anthropicCacheBilling>): InvokeModel {
  let turn = -1;
  return (sent, session) => {
    const usage = { inputTokens: bill(sent, session), outputTokens: 60 };
    turn++;
    if (turn >= turns)
      return [{ role: "assistant", content: "All done: the parser is refactored and the tests pass.", usage }];
    const step = steps[turn]!;
    const messages: ModelMessage[] = [
      {
        role: "assistant",
        content: `Next I ${step.tool} ${step.input.path ?? step.input.pattern ?? "the suite"} to check step ${turn}.`,
      },
      { type: "tool_call", id: `call_${turn}`, name: step.tool, input: step.input, usage },
    ];
    return messages;
  };
}

const summarizer = scriptedSummarizer(() => billingTotals);
const facts = steps.map((step) => step.fact);

const strategies: [string, AgentLoopOptions][] = [
  ["none", { compaction: false, largeOutput: false }],
  ["truncation", { compaction: { keepTurns: 2 }, largeOutput: false }],
  ["summary", { compaction: summarizeOlderTurns({ invokeModel: summarizer, contextWindow }), largeOutput: false }],
  ["clearing", { compaction: clearToolResults(), largeOutput: false }],
  ["clearing + offloading", { compaction: clearToolResults() }],
  ["the default now (truncation + clearing + offloading)", {}],
];

console.log(
  `1. A ${turns}-turn coding session (${steps.filter((step) => step.tool === "test").length} test runs of 200 KB, reads of 2-60 KB, greps of 5-20 KB)\n`,
);
console.log("| strategy | peak prompt | total input | billed (cached) | calls over 200k | facts reachable |");
console.log("|---|---:|---:|---:|---:|---:|");
for (const [name, options] of strategies) {
  billingTotals = emptyBilling();
  const session = await agentLoop(
    agent(anthropicCacheBilling(billingTotals, contextWindow)),
    tools,
    initSession(
      "You are a careful coding agent working in a TypeScript repository.",
      "Refactor the parser and keep the tests green.",
    ),
    { ...options, maxIterations: turns + 5 },
  );
  const reached = await reachableFacts(session, facts);
  const { peak, input, billed, over } = billingTotals;
  console.log(`| ${name} | ${format(peak)} | ${format(input)} | ${format(billed)} | ${over} | ${reached} / ${turns} |`);
}

// 2. Many tools: what each request carries with every schema, and with deferred tools.
const services = ["github", "slack", "jira", "linear", "notion", "gdrive", "calendar", "postgres", "sentry", "stripe"];
const actions = [
  "create",
  "get",
  "list",
  "update",
  "delete",
  "search",
  "archive",
  "assign",
  "comment",
  "export",
  "import",
  "merge",
  "close",
  "reopen",
  "label",
  "move",
  "share",
  "sync",
  "watch",
  "report",
];
const objects = ["issue", "message", "ticket", "page", "file", "event", "row", "alert", "payment", "project"];
const mcpTools = services.flatMap((service, serviceIndex) =>
  actions.map((action, actionIndex) => {
    const object = objects[(serviceIndex + actionIndex) % objects.length]!;
    const parameters = 4 + ((serviceIndex * 7 + actionIndex) % 9);
    const properties = Object.fromEntries(
      Array.from({ length: parameters }, (_, index) => [
        `${["id", "title", "body", "owner", "labels", "state", "limit", "cursor", "since", "until", "query", "fields"][index]}`,
        {
          type: index === 4 ? "array" : index === 6 ? "integer" : "string",
          description: `The ${object}'s ${["identifier", "title", "text", "owner's login", "labels to apply", "state filter (open, closed, all)", "maximum number of results (1-100)", "pagination cursor from a previous call", "ISO 8601 lower time bound", "ISO 8601 upper time bound", "free-text search expression", "comma-separated fields to return"][index]}.`,
          ...(index === 4 ? { items: { type: "string" } } : {}),
        },
      ]),
    );
    return tool({
      name: `${service}_${action}_${object}`,
      description: `${action[0]!.toUpperCase()}${action.slice(1)} a ${object} in ${service}. Requires the ${service} connection to be authorized; returns the ${object} as JSON with its id, URL and timestamps.`,
      inputSchema: { type: "object", properties, required: ["id"] },
      deferred: true,
      handler: () => "ok",
    });
  }),
);
const requestTokens = (sent: readonly ToolSchema[]): number => tokensOf(JSON.stringify(sent).length);
const all = requestTokens(
  mcpTools
    .map((definition) => ({ ...definition, deferred: false }))
    .map(({ handler: _handler, deferred: _deferred, validate: _validate, ...schema }) => schema),
);
const sentTools: number[] = [];
let call = 0;
await agentLoop(
  (sent) => {
    sentTools.push(requestTokens(sent));
    call++;
    if (call === 1)
      return [
        { type: "tool_call", id: "s", name: "search_tools", input: { query: "create a github issue with labels" } },
      ];
    if (call === 2) return [{ type: "tool_call", id: "c", name: "github_create_issue", input: { id: "1" } }];
    return [{ role: "assistant", content: "done" }];
  },
  mcpTools,
  initSession("s", "file an issue"),
);
console.log(`\n2. ${mcpTools.length} MCP-style tools: the tools part of each request\n`);
console.log("| | tokens per request |");
console.log("|---|---:|");
console.log(`| all ${mcpTools.length} tools sent | ${format(all)} |`);
console.log(`| deferred: search_tools only (before a search) | ${format(sentTools[0]!)} |`);
console.log(`| deferred: search_tools + 5 loaded | ${format(sentTools[1]!)} |`);
