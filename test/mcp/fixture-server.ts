// An MCP server over stdio, spawned by the tests: `node fixture-server.ts [--tag <text>]`. The tag
// only marks the process's command line, so a test can find its own children in /proc.
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createFixtureServer } from "./fixture-tools.ts";

await createFixtureServer().connect(new StdioServerTransport());
