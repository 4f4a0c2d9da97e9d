#!/usr/bin/env node
// The `simple-agent-loop` executable: the CLI on this process. The compile cache goes on first;
// the CLI itself is imported after it, so that its modules are compiled once, not at every start.
import { enableCompileCache } from "./compile-cache.ts";

enableCompileCache(process.env);
const { runOnProcess } = await import("./run-process.ts");
await runOnProcess(process.argv.slice(2));
