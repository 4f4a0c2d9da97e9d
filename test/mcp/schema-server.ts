// An MCP server over stdio whose tools have the input schemas real servers send but the SDK's
// McpServer never writes, so it is built on the SDK's low-level Server: `node schema-server.ts [tool names]`.
// Every tool answers with the arguments it received, as JSON text.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";

const tools: Tool[] = [
  // What the Go SDK and FastMCP send for a tool without parameters.
  { name: "no_parameters", description: "Takes nothing.", inputSchema: { type: "object" } },
  {
    name: "referenced",
    description: "Its parameter's schema is a reference.",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { item: { $ref: "#/$defs/Item" } },
      required: ["item"],
      $defs: { Item: { type: "object", properties: { id: { type: "integer" } }, required: ["id"] } },
    },
  },
];

// Any name given on the command line is one more tool taking nothing (a server choosing its names).
for (const name of process.argv.slice(2))
  tools.push({ name, description: "Named by the test.", inputSchema: { type: "object" } });

const server = new Server({ name: "schemas", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, (request) => ({
  content: [{ type: "text", text: JSON.stringify(request.params.arguments ?? {}) }],
}));
await server.connect(new StdioServerTransport());
