import { join } from "node:path";
import {
  agentLoop,
  compactSession,
  extendSession,
  send,
  summarizeOlderTurns,
  tool,
  type ModelMessage,
  type Session,
  type ToolDefinition,
  type Usage,
} from "simple-agent-loop";
import { appendEntry, openSession } from "simple-agent-loop/store";
import { scriptedModel, type ScriptedTurn } from "simple-agent-loop/testing";

/**
 * What `recordSession` wrote, turn by turn (a turn: a user message and what followed):
 * 1. thinking, three parallel tool calls (one fails), an answer;
 * 2. three model calls with tools and a JSON result; afterwards `compactSession` shortens old thinking and inputs;
 * 3. a summary compaction (a splice) before the model call, which is then aborted;
 * 4. a deploy call waiting for approval next to a status call that ran (the run paused).
 */
export const recorded = {
  turns: 4,
  userTexts: [
    "Why is CI failing on main?",
    "Fix the workflow and run the tests.",
    "Run the full integration suite.",
    "Deploy to staging.",
  ],
  answers: ["CI runs on Node 18, but package.json requires Node 20 or later", "All 128 tests pass on Node 20."],
  thinking: "CI fails on main. I should look at the workflow file and the last test output before guessing.",
  failedCall: "call_log",
  pendingCall: "call_deploy",
  summary:
    "The user asked why CI failed: the workflow used Node 18 while package.json needs Node 20. The agent updated the workflow; all 128 tests pass.",
  turnUsage: [
    { inputTokens: 1850 + 2400, outputTokens: 210 + 160 },
    { inputTokens: 2900 + 3600 + 4100, outputTokens: 420 + 95 + 130 },
    { inputTokens: 0, outputTokens: 0 },
    { inputTokens: 1500, outputTokens: 60 },
  ],
} as const;

/** The tools of the recorded agent; `deploy` needs approval. Handlers take a little time, so durations show. */
export function releaseTools(): ToolDefinition[] {
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  return [
    tool({
      name: "list_files",
      description: "List files.",
      inputSchema: { type: "object", properties: { path: { type: "string" } } },
      handler: async () => (await wait(25), [".github/workflows/ci.yml", "package.json", "src/", "test/"]),
    }),
    tool({
      name: "read_file",
      description: "Read a file.",
      inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      handler: async (input) => {
        await wait(60);
        if (input.path === "test/output.log")
          throw new Error("ENOENT: no such file or directory, open 'test/output.log'");
        return String(input.path).endsWith(".yml")
          ? "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/setup-node@v4\n        with: { node-version: 18 }\n      - run: npm test\n"
          : '{ "engines": { "node": ">=20" } }';
      },
    }),
    tool({
      name: "write_file",
      description: "Write a file.",
      inputSchema: { type: "object" },
      handler: async () => (await wait(15), "written"),
    }),
    tool({
      name: "run_tests",
      description: "Run the tests.",
      inputSchema: { type: "object" },
      handler: async () => (await wait(140), { passed: 128, failed: 0, durationMs: 8412 }),
    }),
    tool({
      name: "status",
      description: "Deployment status.",
      inputSchema: { type: "object" },
      handler: () => ({ staging: "v1.4.2", healthy: true }),
    }),
    tool({
      name: "deploy",
      description: "Deploy.",
      inputSchema: { type: "object" },
      requireApproval: true,
      handler: async (input) => (await wait(80), `deployed to ${String(input.env)}`),
    }),
  ];
}

/**
 * Records a realistic session with the real loop into `<directory>/<name>.jsonl` and returns it
 * still open (bound to the file): the caller can go on (resolve the approval, run more turns) and
 * must `closeSession` it.
 */
export async function recordSession(
  directory: string,
  name = "release-agent",
): Promise<{ path: string; session: Session }> {
  const path = join(directory, `${name}.jsonl`);
  const session = await openSession(path);
  const tools = releaseTools();
  extendSession(session, {
    role: "system",
    content:
      "You are a careful release engineer. Inspect the repository with the tools before changing anything, and never deploy without approval.",
  });

  send(session, recorded.userTexts[0]);
  await agentLoop(
    model([
      [
        { type: "thinking", content: recorded.thinking },
        { type: "tool_call", id: "call_ls", name: "list_files", input: { path: "." } },
        { type: "tool_call", id: "call_ci", name: "read_file", input: { path: ".github/workflows/ci.yml" } },
        turnEnd(
          { type: "tool_call", id: recorded.failedCall, name: "read_file", input: { path: "test/output.log" } },
          { inputTokens: 1850, outputTokens: 210, cacheReadTokens: 1200 },
        ),
      ],
      [
        turnEnd(
          {
            role: "assistant",
            content: `${recorded.answers[0]}: the workflow pins node-version 18.\nUpdate actions/setup-node to node-version 20 and CI will pass.`,
          },
          { inputTokens: 2400, outputTokens: 160 },
          "end_turn",
        ),
      ],
    ]),
    tools,
    session,
  );

  send(session, recorded.userTexts[1]);
  await agentLoop(
    model([
      [
        {
          type: "thinking",
          content: `The fix is a one-line change in the workflow. ${"I will keep every other step as it is, then run the whole test suite to be sure. ".repeat(3)}`,
        },
        turnEnd(
          {
            type: "tool_call",
            id: "call_write",
            name: "write_file",
            input: {
              path: ".github/workflows/ci.yml",
              content:
                "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/setup-node@v4\n        with: { node-version: 20 }\n      - run: npm test\n",
            },
          },
          { inputTokens: 2900, outputTokens: 420 },
        ),
      ],
      [
        turnEnd(
          { type: "tool_call", id: "call_tests", name: "run_tests", input: {} },
          { inputTokens: 3600, outputTokens: 95 },
        ),
      ],
      [
        turnEnd(
          { role: "assistant", content: recorded.answers[1] },
          { inputTokens: 4100, outputTokens: 130 },
          "end_turn",
        ),
      ],
    ]),
    tools,
    session,
  );
  compactSession(session, { keepTurns: 1, maxLength: 60 });
  appendEntry(session, "bookmark", { label: "workflow fixed" });

  send(session, recorded.userTexts[2]);
  const abort = new AbortController();
  setTimeout(() => abort.abort(), 150);
  await agentLoop(
    model([{ delay: 30_000, messages: [{ role: "assistant", content: "never sent" }] }]),
    tools,
    session,
    {
      signal: abort.signal,
      compaction: summarizeOlderTurns({
        invokeModel: scriptedModel([[{ role: "assistant", content: recorded.summary }]]),
        contextWindow: 6000,
        threshold: 0.5,
        keepTurns: 1,
      }),
    },
  );

  send(session, recorded.userTexts[3]);
  await agentLoop(
    model([
      [
        { type: "tool_call", id: "call_status", name: "status", input: {} },
        turnEnd(
          { type: "tool_call", id: recorded.pendingCall, name: "deploy", input: { env: "staging", version: "v1.5.0" } },
          { inputTokens: 1500, outputTokens: 60 },
        ),
      ],
    ]),
    tools,
    session,
  );
  return { path, session };
}

/** The model of the recorded session: each turn answers after a short, model-like pause. */
function model(turns: ModelMessage[][] | ScriptedTurn[]) {
  return scriptedModel(turns.map((turn) => (Array.isArray(turn) ? { delay: 40, messages: turn } : turn)));
}

function turnEnd<M extends ModelMessage>(
  message: M,
  usage: Usage,
  stopReason: "tool_use" | "end_turn" = "tool_use",
): M {
  return { ...message, usage, stopReason };
}
