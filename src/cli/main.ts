#!/usr/bin/env node
// The `simple-agent-loop` executable: the CLI on this process.
import { runOnProcess } from "./run-process.ts";

await runOnProcess(process.argv.slice(2));
