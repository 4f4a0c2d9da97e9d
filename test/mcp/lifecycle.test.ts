import { randomUUID } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { agentLoop, initSession, isToolResult, response, type AgentEvent } from "simple-agent-loop";
import {
  connectMcp,
  isMcpConnectionError,
  withMcp,
  type McpConnectionError,
  type McpStdioServerConfig,
} from "simple-agent-loop/mcp";
import { scriptedModel } from "simple-agent-loop/testing";
import { startHttpServer } from "./http-server.ts";
import { freePort } from "../helpers.ts";
import { processesTagged, runTool, stdioServer } from "./helpers.ts";

// Processes are found through /proc.
const linux = process.platform === "linux";

describe.runIf(linux)("closing MCP connections", () => {
  it("withMcp closes the connection (the stdio server exits) once the run is over", async () => {
    const tag = randomUUID();
    const session = await withMcp({ local: stdioServer(tag) }, async (tools) => {
      expect(await processesTagged(tag)).toHaveLength(1);
      const model = scriptedModel([
        [{ type: "tool_call", id: "call-1", name: "echo", input: { text: "bye" } }],
        [{ role: "assistant", content: "done" }],
      ]);
      return agentLoop(model, tools, initSession("system", "go"));
    });
    expect(session.messages.find(isToolResult)).toMatchObject({ output: "echo: bye" });
    expect(await processesTagged(tag)).toStrictEqual([]);
  });

  it("withMcp closes the connection when the run throws, and rethrows", async () => {
    const tag = randomUUID();
    await expect(
      withMcp({ local: stdioServer(tag) }, async () => {
        throw new Error("run failed");
      }),
    ).rejects.toThrow("run failed");
    expect(await processesTagged(tag)).toStrictEqual([]);
  });

  it("await using closes the connection at the end of the block; close() is idempotent", async () => {
    const tag = randomUUID();
    let closeAgain: (() => Promise<void>) | undefined;
    {
      await using connection = await connectMcp({ local: stdioServer(tag) });
      closeAgain = connection.close;
      expect(await processesTagged(tag)).toHaveLength(1);
    }
    expect(await processesTagged(tag)).toStrictEqual([]);
    await closeAgain?.();
  });

  it("aborting during a slow MCP tool ends the run as aborted and closes the connection", async () => {
    const tag = randomUUID();
    const controller = new AbortController();
    const connection = await connectMcp({ local: stdioServer(tag) }, { signal: controller.signal });
    const events: AgentEvent[] = [];
    const model = scriptedModel([
      [{ type: "tool_call", id: "call-1", name: "slow", input: {} }],
      [{ role: "assistant", content: "never" }],
    ]);
    const session = await agentLoop(model, connection.tools, initSession("system", "go"), {
      signal: controller.signal,
      onEvent: (event) => {
        events.push(event);
        // The server reports progress once the tool is running on its side.
        if (event.type === "tool-execution-update") controller.abort();
      },
    });
    expect(events.find((event) => event.type === "tool-execution-update")).toMatchObject({
      id: "call-1",
      name: "slow",
      progress: { progress: 1, message: "started" },
    });
    const { ts: _ts, ...result } = session.messages.find(isToolResult)!;
    expect(result).toStrictEqual({
      type: "tool_result",
      id: "call-1",
      output: "Error: aborted before the tool finished",
      isError: true,
    });
    expect(response(session)).toMatchObject({ content: "", stopReason: "aborted" });
    expect(model.callCount).toBe(1);
    await vi.waitFor(async () => expect(await processesTagged(tag)).toStrictEqual([]), {
      timeout: 20_000,
      interval: 100,
    });
    await connection.close();
    expect(await runTool(connection.tools, "echo", { text: "late" })).toMatchObject({ isError: true });
  });

  it("closing ends the HTTP session on the server", async () => {
    const server = await startHttpServer();
    try {
      const connection = await connectMcp({ remote: { url: server.url } });
      expect(server.sessions()).toBe(1);
      await connection.close();
      expect(server.requests.at(-1)).toBe("DELETE");
      expect(server.sessions()).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("aborting the connection's signal during an HTTP tool call tells the server before closing", async () => {
    const server = await startHttpServer();
    try {
      const controller = new AbortController();
      const connection = await connectMcp({ remote: { url: server.url } }, { signal: controller.signal });
      const model = scriptedModel([
        [{ type: "tool_call", id: "call-1", name: "slow", input: {} }],
        [{ role: "assistant", content: "never" }],
      ]);
      const session = await agentLoop(model, connection.tools, initSession("system", "go"), {
        signal: controller.signal,
        onEvent: (event) => {
          if (event.type === "tool-execution-update") controller.abort();
        },
      });
      expect(response(session)).toMatchObject({ stopReason: "aborted" });
      // The abort closes the connection; close() returns that same closing.
      await connection.close();
      expect(server.methods.filter((method) => method === "notifications/cancelled")).toHaveLength(1);
      expect(server.sessions()).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("aborting the connection's signal after connecting cancels nothing that already finished", async () => {
    const server = await startHttpServer();
    try {
      const controller = new AbortController();
      const connection = await connectMcp({ remote: { url: server.url } }, { signal: controller.signal });
      controller.abort();
      await connection.close();
      expect(server.methods).toStrictEqual(["initialize", "notifications/initialized", "tools/list"]);
    } finally {
      await server.close();
    }
  });

  it("a server that dies mid-call gives an error result, not a crash", async () => {
    await using connection = await connectMcp({ local: stdioServer() });
    const result = await runTool(connection.tools, "crash");
    expect(result).toMatchObject({ isError: true });
    expect(result.output).toMatch(/^Error: MCP server "local": .*Connection closed/);
    expect(await runTool(connection.tools, "echo", { text: "again" })).toMatchObject({ isError: true });
  });

  it("an HTTP server that went away gives an error result", async () => {
    const server = await startHttpServer();
    await using connection = await connectMcp({ remote: { url: server.url } });
    await server.close();
    const result = await runTool(connection.tools, "echo", { text: "anyone?" });
    expect(result).toMatchObject({ isError: true });
    expect(result.output).toMatch(/^Error: MCP server "remote": /);
  });
});

describe.runIf(linux)("connection failures", () => {
  async function rejection(promise: Promise<unknown>): Promise<McpConnectionError> {
    const error = await promise.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(isMcpConnectionError(error)).toBe(true);
    return error as McpConnectionError;
  }

  it("a command that does not exist: names the server, closes the servers already started", async () => {
    const tag = randomUUID();
    const error = await rejection(connectMcp({ good: stdioServer(tag), ghost: { command: `no-such-command-${tag}` } }));
    expect(error.server).toBe("ghost");
    expect(error.message).toBe(
      `MCP server "ghost" (command "no-such-command-${tag}"): command not found (spawn no-such-command-${tag} ENOENT)`,
    );
    expect(await processesTagged(tag)).toStrictEqual([]);
  });

  it("a closed port: names the server, closes the servers already connected", async () => {
    const port = await freePort();
    const tag = randomUUID();
    const error = await rejection(
      connectMcp({ good: stdioServer(tag), gone: { url: `http://127.0.0.1:${port}/mcp?token=secret` } }),
    );
    expect(error.server).toBe("gone");
    expect(error.message).toMatch(
      new RegExp(`^MCP server "gone" \\(http://127\\.0\\.0\\.1:${port}/mcp\\): could not connect: .*ECONNREFUSED`),
    );
    expect(error.message).not.toContain("secret");
    expect(await processesTagged(tag)).toStrictEqual([]);
  });

  it("a server that exits during initialization: names the server", async () => {
    const error = await rejection(
      connectMcp({ broken: { command: process.execPath, args: ["-e", "process.exit(3)"] } }),
    );
    expect(error.server).toBe("broken");
    expect(error.message).toMatch(/^MCP server "broken" \(command ".*"\): could not connect: .*Connection closed/);
  });

  it("a server that exits during initialization with stderr ignored: its last stderr lines explain it", async () => {
    const script = "console.error('starting'); console.error('GITHUB_TOKEN is not set'); process.exit(1)";
    const error = await rejection(
      connectMcp({ github: { command: process.execPath, args: ["-e", script] } }, { stderr: "ignore" }),
    );
    expect(error.message).toMatch(
      /^MCP server "github" \(command ".*"\): could not connect: .*Connection closed; its stderr ended with: starting\nGITHUB_TOKEN is not set$/,
    );
  });

  it("a bad URL: names the server", async () => {
    const error = await rejection(connectMcp({ typo: { url: "not a url" } }));
    expect(error.message).toBe('MCP server "typo" ("not a url"): "url" is not a valid URL: "not a url"');
  });

  it("a server that never answers: the timeout ends the connection attempt", async () => {
    const tag = randomUUID();
    const error = await rejection(connectMcp({ silent: silentServer(tag) }, { timeout: 500 }));
    expect(error.server).toBe("silent");
    expect(error.message).toMatch(/^MCP server "silent" \(command ".*"\): could not connect: .*Request timed out/);
    expect(await processesTagged(tag)).toStrictEqual([]);
  });

  it("an abort while connecting rejects with the signal's reason and leaves no process", async () => {
    const tag = randomUUID();
    const controller = new AbortController();
    const connecting = connectMcp({ silent: silentServer(tag) }, { signal: controller.signal });
    await vi.waitFor(async () => expect(await processesTagged(tag)).toHaveLength(1), { timeout: 20_000, interval: 20 });
    controller.abort(new Error("user left"));
    await expect(connecting).rejects.toThrow("user left");
    expect(await processesTagged(tag)).toStrictEqual([]);
  });

  it("an already aborted signal rejects before starting anything", async () => {
    const tag = randomUUID();
    await expect(
      connectMcp({ local: stdioServer(tag) }, { signal: AbortSignal.abort(new Error("too late")) }),
    ).rejects.toThrow("too late");
    expect(await processesTagged(tag)).toStrictEqual([]);
  });
});

/** A process that starts but never answers MCP (nor exits when its stdin closes). */
function silentServer(tag: string): McpStdioServerConfig {
  return { command: process.execPath, args: ["-e", "setInterval(() => {}, 1000)", tag] };
}
