#!/usr/bin/env node
// The `simple-agent-loop` executable: the CLI on this process.
import { runCli } from "./cli.ts";
import { drain } from "./shutdown.ts";

const code = await runCli({
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
});
// Kept-alive HTTP connections and the like must not hold the exit up; what was written must get out.
await Promise.all([drain(process.stdout), drain(process.stderr)]);
process.exit(code);
