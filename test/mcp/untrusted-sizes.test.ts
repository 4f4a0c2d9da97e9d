import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { describe, expect, it } from "vitest";
import { agentLoop, initSession, isProviderError, type ToolSchema } from "simple-agent-loop";
import { openaiChat } from "simple-agent-loop/openai";
import { maxMcpResultLength } from "../../src/mcp/mcp-tools.ts";
import { toolRegistry } from "../../src/mcp/tool-registry.ts";

function deepSchema(levels: number): Record<string, unknown> {
  const root: Record<string, unknown> = { type: "object", properties: {} };
  let node = root;
  for (let level = 0; level < levels; level++) {
    const next: Record<string, unknown> = { type: "object", properties: {} };
    node.properties = { inner: next };
    node = next;
  }
  return root;
}

// The loop tools of one server "srv" that lists `listed` and answers every call with `client`.
async function mcpTools(
  client: Client,
  listed: unknown,
): Promise<ReturnType<Awaited<ReturnType<typeof toolRegistry>>["tools"]>> {
  const server = {
    server: "srv",
    client,
    timeout: undefined,
    calls: new Map(),
    deferred: false,
    listed: listed as never,
  };
  return (await toolRegistry([server], { prefix: false, trust: undefined })).tools();
}

const answering = (content: unknown): Client => ({ callTool: () => Promise.resolve(content) }) as unknown as Client;
const context = {
  signal: new AbortController().signal,
  id: "c1",
  name: "t",
  turn: [],
  session: { messages: [] },
  update: () => undefined,
};

describe("MCP: untrusted sizes are bounded where they enter", () => {
  it("a tool whose input schema is 100,000 levels deep is refused by name at connect time", async () => {
    const listed = [{ name: "deep_tool", inputSchema: deepSchema(100_000) }];
    await expect(mcpTools(answering({}), listed)).rejects.toThrow(/srv.*deep_tool.*nested/);
  });

  it("a tool whose input schema is larger than the limit is refused by name", async () => {
    const properties = Object.fromEntries(
      Array.from({ length: 5_000 }, (_, index) => [`p${index}`, { type: "string", description: "x".repeat(40) }]),
    );
    const listed = [{ name: "wide_tool", inputSchema: { type: "object", properties } }];
    await expect(mcpTools(answering({}), listed)).rejects.toThrow(/wide_tool.*characters/);
  });

  it("a huge tool answer enters the session cut, saying how much was left out", async () => {
    const huge = "y".repeat(5_000_000);
    const [made] = await mcpTools(answering({ content: [{ type: "text", text: huge }] }), [
      { name: "big", inputSchema: { type: "object" } },
    ]);
    const output = (await made!.handler({}, context)) as string;
    expect(output.length).toBeLessThan(maxMcpResultLength + 200);
    expect(output).toMatch(/cut: 4900000 more characters/);
  });
});

describe("a local failure is never reported as the provider's", () => {
  it("a request body too deep to write as JSON fails at once, not as a retryable ProviderError, and nothing is sent", async () => {
    let sent = 0;
    const model = openaiChat({
      model: "m",
      apiKey: "sk-test-key-123456",
      baseURL: "http://127.0.0.1:9/v1",
      fetch: () => (sent++, Promise.reject(new Error("unreachable"))),
    });
    const deep: ToolSchema = { name: "deep", description: "d", input_schema: deepSchema(100_000) as never };
    const error = await agentLoop(model, [deep], initSession("s", "u")).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeDefined();
    expect(isProviderError(error)).toBe(false);
    expect((error as { retryable?: boolean }).retryable).not.toBe(true);
    expect(sent).toBe(0);
  });
});
