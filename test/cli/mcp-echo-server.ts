// A one-tool MCP server over stdio for the CLI's tests: `shout` returns its text in capitals.
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
await server.connect(new StdioServerTransport());
