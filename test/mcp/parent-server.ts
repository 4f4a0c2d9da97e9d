// An MCP server over stdio that starts a long-lived child first: `node parent-server.ts <pid file>`.
// The child's pid is written to the file, so a test can check the child is gone once the server is.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createFixtureServer } from "./fixture-tools.ts";

const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
writeFileSync(process.argv[2]!, String(child.pid));
await createFixtureServer().connect(new StdioServerTransport());
