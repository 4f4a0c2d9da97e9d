// 50 turns, each a tool call that returns a 200 KB screenshot (PNG signature, then incompressible
// bytes, different every turn, as real screenshots are): simple-agent-loop with its file store
// against the peers that take images from a tool (pi-agent-core, ai), each in its own process.
// Measures wall time per turn, the history kept on disk (ours: the store's JSONL and its blob
// directory; a peer: its message history as JSON, the way its users save it), memory, the request
// the model is handed on the last call, and (ours) loading the stored session back.
// `npm run screenshots` (Node 24, from the sources; the peers from bench/node_modules).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const turns = 50;
const screenshotBytes = 200 * 1024;
const libraries = ["ours", "ours-no-compaction", "ours-sync-off", "pi-agent-core", "ai"] as const;
type Library = (typeof libraries)[number];

type Measured = {
  library: Library;
  msPerTurn: number;
  diskBytes: number;
  diskFiles: number;
  lastRequestBytes: number;
  retainedMB: number;
  maxRssMB: number;
  loadMs?: number;
};

// A seeded screenshot: the PNG signature and header bytes, then pseudo-random bytes (PNG data is
// compressed, so it does not compress again).
function screenshot(turn: number): Uint8Array {
  const bytes = new Uint8Array(screenshotBytes);
  let state = (turn + 1) * 2654435761;
  for (let index = 0; index < bytes.length; index++) {
    state = (state * 1103515245 + 12345) >>> 0;
    bytes[index] = state >>> 24;
  }
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 0);
  return bytes;
}

const base64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64");

function directorySize(path: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const full = join(path, entry.name);
    if (entry.isDirectory()) {
      const inner = directorySize(full);
      bytes += inner.bytes;
      files += inner.files;
    } else {
      bytes += statSync(full).size;
      files++;
    }
  }
  return { bytes, files };
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

async function runOurs(
  directory: string,
  compaction: boolean,
  sync: "turn" | "off" = "turn",
): Promise<Omit<Measured, "library" | "maxRssMB">> {
  const { agentLoop, imagePart, send, tool, toolContent } = await import("simple-agent-loop");
  const { openSession, closeSession, loadSession } = await import("simple-agent-loop/store");
  let lastRequestBytes = 0;
  let calls = 0;
  const shoot = tool({
    name: "screenshot",
    description: "Screenshots the page.",
    inputSchema: { type: "object", properties: { turn: { type: "number" } }, required: ["turn"] },
    handler: (input) => {
      const { turn } = input as { turn: number };
      return toolContent([{ type: "text", text: `screenshot ${turn}` }, imagePart(screenshot(turn), "image/png")]);
    },
  });
  const path = join(directory, "session.jsonl");
  gc();
  const baseline = process.memoryUsage().heapUsed;
  const session = await openSession(path, { sync });
  send(session, "Check the page after each step.");
  const started = performance.now();
  await agentLoop(
    (_tools, view) => {
      calls++;
      if (calls > turns) {
        lastRequestBytes = JSON.stringify(view.messages).length;
        return [{ role: "assistant", content: "done" }];
      }
      return [{ type: "tool_call", id: `call_${calls}`, name: "screenshot", input: { turn: calls } }];
    },
    [shoot],
    session,
    { maxIterations: turns + 5, ...(compaction ? {} : { compaction: false }) },
  );
  const msPerTurn = (performance.now() - started) / turns;
  gc();
  const retainedMB = (process.memoryUsage().heapUsed - baseline) / 1024 / 1024;
  await closeSession(session);
  const disk = directorySize(directory);
  const loadStarted = performance.now();
  const loaded = await loadSession(path);
  const loadMs = performance.now() - loadStarted;
  if (loaded.messages.length !== session.messages.length) throw new Error("the loaded session differs");
  return { msPerTurn, diskBytes: disk.bytes, diskFiles: disk.files, lastRequestBytes, retainedMB, loadMs };
}

async function runPi(directory: string): Promise<Omit<Measured, "library" | "maxRssMB">> {
  const { Agent } = await import("@mariozechner/pi-agent-core");
  const { createAssistantMessageEventStream } = await import("@mariozechner/pi-ai");
  type Model = import("@mariozechner/pi-ai").Model<"bench-scripted">;
  type AssistantMessage = import("@mariozechner/pi-ai").AssistantMessage;
  type AgentTool = import("@mariozechner/pi-agent-core").AgentTool;
  const model: Model = {
    id: "scripted",
    name: "scripted",
    api: "bench-scripted",
    provider: "bench",
    baseUrl: "",
    reasoning: false,
    input: ["text", "image"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 1_000_000,
    maxTokens: 100_000,
  };
  let calls = 0;
  let lastRequestBytes = 0;
  const shoot: AgentTool = {
    name: "screenshot",
    label: "screenshot",
    description: "Screenshots the page.",
    parameters: {
      type: "object",
      properties: { turn: { type: "number" } },
      required: ["turn"],
    } as unknown as AgentTool["parameters"],
    execute: async (_id, params) => {
      const { turn } = params as { turn: number };
      return {
        content: [
          { type: "text", text: `screenshot ${turn}` },
          { type: "image", data: base64(screenshot(turn)), mimeType: "image/png" },
        ],
        details: undefined,
      };
    },
  };
  gc();
  const baseline = process.memoryUsage().heapUsed;
  const agent = new Agent({
    initialState: { systemPrompt: "", model, tools: [shoot] },
    streamFn: (streamModel, context) => {
      calls++;
      const base = {
        role: "assistant" as const,
        api: streamModel.api,
        provider: streamModel.provider,
        model: streamModel.id,
        usage: {
          input: 1,
          output: 1,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 2,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        timestamp: Date.now(),
      };
      let message: AssistantMessage;
      if (calls > turns) {
        lastRequestBytes = JSON.stringify(context.messages).length;
        message = { ...base, content: [{ type: "text", text: "done" }], stopReason: "stop" };
      } else {
        message = {
          ...base,
          content: [{ type: "toolCall", id: `call_${calls}`, name: "screenshot", arguments: { turn: calls } }],
          stopReason: "toolUse",
        };
      }
      const stream = createAssistantMessageEventStream();
      stream.push({ type: "done", reason: message.stopReason === "toolUse" ? "toolUse" : "stop", message });
      stream.end(message);
      return stream;
    },
  });
  const started = performance.now();
  await agent.prompt("Check the page after each step.");
  const msPerTurn = (performance.now() - started) / turns;
  if (agent.state.errorMessage !== undefined) throw new Error(`pi-agent-core: ${agent.state.errorMessage}`);
  gc();
  const retainedMB = (process.memoryUsage().heapUsed - baseline) / 1024 / 1024;
  // pi's own session files are JSONL, one message a line, images inline: the same bytes.
  writeFileSync(join(directory, "session.jsonl"), agent.state.messages.map((m) => JSON.stringify(m)).join("\n"));
  const disk = directorySize(directory);
  return { msPerTurn, diskBytes: disk.bytes, diskFiles: disk.files, lastRequestBytes, retainedMB };
}

async function runAi(directory: string): Promise<Omit<Measured, "library" | "maxRssMB">> {
  const { generateText, stepCountIs, tool, jsonSchema } = await import("ai");
  type LanguageModel = import("ai").LanguageModel;
  type V4 = Extract<LanguageModel, { specificationVersion: "v4" }>;
  type Result = Awaited<ReturnType<V4["doGenerate"]>>;
  let calls = 0;
  let lastRequestBytes = 0;
  const usage: Result["usage"] = {
    inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 1, text: 1, reasoning: undefined },
  };
  const model: V4 = {
    specificationVersion: "v4",
    provider: "bench",
    modelId: "scripted",
    supportedUrls: {},
    async doGenerate(options) {
      calls++;
      if (calls > turns) {
        lastRequestBytes = JSON.stringify(options.prompt).length;
        return {
          content: [{ type: "text", text: "done" }],
          finishReason: { unified: "stop", raw: "stop" },
          usage,
          warnings: [],
        };
      }
      return {
        content: [
          {
            type: "tool-call",
            toolCallId: `call_${calls}`,
            toolName: "screenshot",
            input: JSON.stringify({ turn: calls }),
          },
        ],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      };
    },
    doStream() {
      throw new Error("bench: doStream is not used");
    },
  };
  gc();
  const baseline = process.memoryUsage().heapUsed;
  const started = performance.now();
  const result = await generateText({
    model,
    prompt: "Check the page after each step.",
    tools: {
      screenshot: tool({
        description: "Screenshots the page.",
        inputSchema: jsonSchema<{ turn: number }>({
          type: "object",
          properties: { turn: { type: "number" } },
          required: ["turn"],
        }),
        execute: async ({ turn }) => ({ turn, data: base64(screenshot(turn)) }),
        toModelOutput: ({ output }) => ({
          type: "content",
          value: [
            { type: "text", text: `screenshot ${output.turn}` },
            { type: "file", mediaType: "image/png", data: { type: "data", data: output.data } },
          ],
        }),
      }),
    },
    stopWhen: stepCountIs(turns + 1),
    maxRetries: 0,
  });
  const msPerTurn = (performance.now() - started) / turns;
  gc();
  const retainedMB = (process.memoryUsage().heapUsed - baseline) / 1024 / 1024;
  writeFileSync(join(directory, "messages.json"), JSON.stringify(result.responseMessages));
  const disk = directorySize(directory);
  if (result.text !== "done") throw new Error(`ai: ${result.text}`);
  return { msPerTurn, diskBytes: disk.bytes, diskFiles: disk.files, lastRequestBytes, retainedMB };
}

async function worker(library: Library): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), `bench-screenshots-${library}-`));
  try {
    const measured =
      library === "ours"
        ? await runOurs(directory, true)
        : library === "ours-no-compaction"
          ? await runOurs(directory, false)
          : library === "ours-sync-off"
            ? await runOurs(directory, true, "off")
            : library === "pi-agent-core"
              ? await runPi(directory)
              : await runAi(directory);
    const maxRssMB = process.resourceUsage().maxRSS / 1024;
    process.stdout.write(JSON.stringify({ library, ...measured, maxRssMB }));
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

function main(): void {
  const rows: Measured[] = [];
  for (const library of libraries) {
    const output = execFileSync(
      process.execPath,
      ["--expose-gc", "--conditions=simple-agent-loop-source", import.meta.filename, library],
      { encoding: "utf8", maxBuffer: 10_000_000 },
    );
    rows.push(JSON.parse(output) as Measured);
    process.stderr.write(`${library} done\n`);
  }
  const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);
  console.log(
    `${turns} turns, a ${screenshotBytes / 1024} KB screenshot per turn (${process.version}, ${new Date().toISOString()})\n`,
  );
  console.log(
    "| library | ms/turn | history on disk MB (files) | load ms | last request MB | retained heap MB | max RSS MB |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- |");
  for (const row of rows)
    console.log(
      `| ${row.library} | ${row.msPerTurn.toFixed(2)} | ${mb(row.diskBytes)} (${row.diskFiles}) | ${row.loadMs === undefined ? "–" : row.loadMs.toFixed(0)} | ${mb(row.lastRequestBytes)} | ${row.retainedMB.toFixed(1)} | ${row.maxRssMB.toFixed(0)} |`,
    );
}

const requested = process.argv[2];
if (requested !== undefined && (libraries as readonly string[]).includes(requested)) await worker(requested as Library);
else main();
