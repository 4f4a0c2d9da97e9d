// A one-tool MCP server over stdio for the CLI's tests: `shout` returns its text in capitals.
// With ECHO_PROBE=1 in its environment it also has `probe`, which reports what the server's
// process can do (read files, write files, connect to a port): the sandbox tests ask it.
import { readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "echo", version: "1.0.0" });
server.registerTool(
  "shout",
  { description: "Return the text in capitals.", inputSchema: { text: z.string() } },
  ({ text }) => ({
    content: [{ type: "text", text: text.toUpperCase() }],
  }),
);
if (process.env.ECHO_PROBE === "1")
  server.registerTool(
    "probe",
    {
      description: "Report whether this server can read and write files and connect to a port.",
      inputSchema: { read: z.array(z.string()), write: z.array(z.string()), port: z.number() },
    },
    async ({ read, write, port }) => {
      const lines = [
        ...read.map((path) => `read ${path}: ${attempt(() => readFileSync(path, "utf8").trim())}`),
        ...write.map((path) => `write ${path}: ${attempt(() => (writeFileSync(path, "probe\n"), "ok"))}`),
        `connect ${port}: ${await connects(port)}`,
      ];
      return { content: [{ type: "text", text: lines.join("\n") }] };
    },
  );
await server.connect(new StdioServerTransport());

function attempt(action: () => string): string {
  try {
    return action();
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? String(error);
  }
}

function connects(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.on("connect", () => {
      socket.destroy();
      resolve("ok");
    });
    socket.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
  });
}
