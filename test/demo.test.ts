import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sse, sseHeaders, startReplayServer, type ReplayServer } from "./providers/replay-server.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const run = promisify(execFile);

// `npm start` as a user runs it: a child process, with only the environment deciding the model.
function demo(environment: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(ANTHROPIC|OPENAI)_/.test(name)),
  ) as Record<string, string>;
  return run(process.execPath, ["--conditions=simple-agent-loop-source", "examples/list-files.ts", root], {
    cwd: root,
    env: { ...clean, ...environment },
  });
}

describe("the demo of npm start", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("without a provider configured, says so and runs the scripted model through the real tool", async () => {
    const { stdout, stderr } = await demo({});
    expect(stderr).toContain("No model configured (set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL)");
    expect(stdout).toContain("[demo] tool_call list_files {}");
    expect(stdout).toMatch(/Answer: The workspace contains .*package\.json/);
  });

  it("with ANTHROPIC_API_KEY set, talks to the Messages API (here a local server) and runs the tool", async () => {
    const message = (content: unknown[], stopReason: string) =>
      sse(
        [
          { type: "message_start", message: { usage: { input_tokens: 10, output_tokens: 1 } } },
          ...content.flatMap((block, index) => [
            { type: "content_block_start", index, content_block: block },
            { type: "content_block_stop", index },
          ]),
          { type: "message_delta", delta: { stop_reason: stopReason }, usage: { output_tokens: 5 } },
          { type: "message_stop" },
        ],
        { withEventNames: true },
      );
    server.enqueue(
      { headers: sseHeaders, chunks: message([{ type: "tool_use", id: "toolu_1", name: "list_files", input: {} }], "tool_use") },
      { headers: sseHeaders, chunks: message([{ type: "text", text: "I see the files." }], "end_turn") },
    );
    const { stdout, stderr } = await demo({ ANTHROPIC_API_KEY: "sk-ant-demo-test-key", ANTHROPIC_BASE_URL: server.origin, ANTHROPIC_MODEL: "claude-test" });
    expect(stderr).toContain("Model: Anthropic claude-test");
    expect(stdout).toMatch(/tool_result toolu_1: .*package\.json/);
    expect(stdout).toContain("Answer: I see the files.");
    const second = server.requests[1]?.body as { messages: { content: { type: string; content?: string }[] }[] };
    expect(second.messages.at(-1)?.content[0]).toMatchObject({ type: "tool_result", content: expect.stringContaining("package.json") });
  });
});
