// The MCP server the tests connect to, built with the SDK's own McpServer: the same tools over
// stdio (fixture-server.ts, a child process) and Streamable HTTP (http-server.ts, in process).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";

/** A server with one tool per behaviour under test. */
export function createFixtureServer(): McpServer {
  const server = new McpServer({ name: "fixture", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Echo the text back.", inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
    ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] }),
  );
  server.registerTool(
    "add",
    {
      description: "Add two numbers.",
      inputSchema: { a: z.number(), b: z.number() },
      outputSchema: { sum: z.number() },
    },
    ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } }),
  );
  server.registerTool("fail", { description: "Always fails." }, () => ({
    content: [{ type: "text", text: "the disk is on fire" }],
    isError: true,
  }));
  server.registerTool("media", { description: "Returns every kind of content." }, () => ({
    content: [
      { type: "text", text: "a chart" },
      { type: "image", data: Buffer.from("not really a png").toString("base64"), mimeType: "image/png" },
      { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "remember" } },
      { type: "resource_link", uri: "file:///report.pdf", name: "report", mimeType: "application/pdf" },
    ],
  }));
  // Reports progress once it is running, then waits until the client cancels the call.
  server.registerTool("slow", { description: "Runs until cancelled." }, async (extra) => {
    const progressToken = extra._meta?.progressToken;
    if (progressToken !== undefined) {
      await extra.sendNotification({
        method: "notifications/progress",
        params: { progressToken, progress: 1, message: "started" },
      });
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 120_000);
      extra.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return { content: [{ type: "text", text: "finished" }] };
  });
  server.registerTool("pid", { description: "The server's process id." }, () => ({
    content: [{ type: "text", text: String(process.pid) }],
  }));
  server.registerTool("crash", { description: "Exits the server process mid-call." }, () => process.exit(1));
  // Over HTTP, http-server.ts answers a call of it with a response stream that ends at once.
  server.registerTool("hangup", { description: "Hangs up (HTTP only)." }, () => ({
    content: [{ type: "text", text: "not over HTTP" }],
  }));
  // With a server that can resume streams (an event store), the client gets the answer by resuming.
  server.registerTool("reconnect", { description: "Closes its response stream, then answers." }, async (extra) => {
    extra.closeSSEStream?.();
    await new Promise((resolve) => setTimeout(resolve, 100));
    return { content: [{ type: "text", text: "answered" }] };
  });
  server.registerTool("dotted.name", { description: "A name providers reject." }, () => ({
    content: [{ type: "text", text: "ok" }],
  }));
  return server;
}
