import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { agentLoop, initSession, isToolResult, type AgentEvent, type ToolResultMessage } from "simple-agent-loop";
import { connectMcp, type McpConnection } from "simple-agent-loop/mcp";
import { scriptedModel } from "simple-agent-loop/testing";
import { startHttpServer } from "./http-server.ts";
import { processesTagged, runTool } from "./helpers.ts";

// Processes are found through /proc.
const linux = process.platform === "linux";

// The MCP timeout stays at its 60 s default: without the handling of dropped streams, a call the
// server never answers waits for it, far past these tests' limit.
const dropped = { timeout: 20_000 };

describe.runIf(linux)("an HTTP server that goes away mid-call", () => {
  it(
    "killed mid-call: the call fails at once naming the server, later calls fail, close() leaves nothing behind",
    dropped,
    async () => {
      const timersBefore = handles("Timeout").length;
      const tag = randomUUID();
      const server = await startServerProcess(tag);
      const connection = await connectMcp({ remote: { url: server.url } }, { timeout: 60_000 });
      try {
        const result = await callSlowUntilProgress(connection, () => server.child.kill("SIGKILL"));
        expect(result.output).toMatch(
          /^Error: MCP server "remote": MCP error -32000: Connection lost before the server answered: the response stream broke: .+/,
        );
        const later = await runTool(connection.tools, "echo", { text: "anyone?" });
        expect(later).toMatchObject({ isError: true });
        expect(later.output).toMatch(/^Error: MCP server "remote": .*ECONNREFUSED/);
      } finally {
        await connection.close();
        server.child.kill("SIGKILL");
      }
      expect(await processesTagged(tag)).toStrictEqual([]);
      // Other tests' timers may come and go; none may be added, and no socket may stay open.
      expect(handles("TCP")).toStrictEqual([]);
      expect(handles("Timeout").length).toBeLessThanOrEqual(timersBefore);
    },
  );

  it("killed mid-call with a stream it could resume: the call fails once resuming has failed", dropped, async () => {
    const tag = randomUUID();
    const server = await startServerProcess(tag, ["--resumable"]);
    await using connection = await connectMcp({ remote: { url: server.url } }, { timeout: 60_000 });
    try {
      const result = await callSlowUntilProgress(connection, () => server.child.kill("SIGKILL"));
      expect(result.output).toMatch(
        /^Error: MCP server "remote": MCP error -32000: Connection lost before the server answered: the response stream broke and resuming it failed: .*ECONNREFUSED/,
      );
    } finally {
      server.child.kill("SIGKILL");
    }
  });

  it(
    "a response stream that ends without the answer: the call fails, the connection still works",
    dropped,
    async () => {
      const server = await startHttpServer();
      try {
        await using connection = await connectMcp({ remote: { url: server.url } }, { timeout: 60_000 });
        expect(await runTool(connection.tools, "hangup")).toStrictEqual({
          type: "tool_result",
          id: "call",
          output:
            'Error: MCP server "remote": MCP error -32000: Connection lost before the server answered: the response stream ended',
          isError: true,
        });
        expect(await runTool(connection.tools, "echo", { text: "still there" })).toMatchObject({
          output: "echo: still there",
        });
      } finally {
        await server.close();
      }
    },
  );

  it("a stream the server closes and can resume is resumed: the call gets its answer", dropped, async () => {
    const server = await startHttpServer({ resumable: true });
    try {
      await using connection = await connectMcp({ remote: { url: server.url } }, { timeout: 60_000 });
      expect(await runTool(connection.tools, "reconnect")).toStrictEqual({
        type: "tool_result",
        id: "call",
        output: "answered",
      });
      // The answer came over the stream the client opened to resume (a GET with Last-Event-ID).
      expect(server.headers.some((headers) => headers["last-event-id"] !== undefined)).toBe(true);
    } finally {
      await server.close();
    }
  });
});

/** Calls `slow` through the loop and runs `drop` once the server reports it running. */
async function callSlowUntilProgress(connection: McpConnection, drop: () => void): Promise<ToolResultMessage> {
  const model = scriptedModel([
    [{ type: "tool_call", id: "call-1", name: "slow", input: {} }],
    [{ role: "assistant", content: "done" }],
  ]);
  // The progress report comes over the call's response stream, so that stream is open when the server goes.
  const onEvent = (event: AgentEvent): void => void (event.type === "tool-execution-update" && drop());
  const session = await agentLoop(model, connection.tools, initSession("system", "go"), { onEvent });
  const result = session.messages.find(isToolResult)!;
  expect(result).toMatchObject({ id: "call-1", isError: true });
  return result;
}

/** The HTTP fixture server in a child process, which a test can kill. */
async function startServerProcess(tag: string, args: string[] = []): Promise<{ url: string; child: ChildProcess }> {
  const script = fileURLToPath(new URL("./http-server-process.ts", import.meta.url));
  const child = spawn(process.execPath, [script, ...args, "--tag", tag], { stdio: ["ignore", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const [url] = await once(lines, "line");
  lines.close();
  return { url: String(url), child };
}

/** This process's open handles of a kind (`TCP` matches `TCPSocketWrap` and `TCPServerWrap`). */
function handles(kind: string): string[] {
  return process.getActiveResourcesInfo().filter((resource) => resource.startsWith(kind));
}
