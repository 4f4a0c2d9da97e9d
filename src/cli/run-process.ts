import { runCli } from "./cli.ts";
import { drain } from "./shutdown.ts";

/**
 * Runs the CLI with `argv` on this process (its streams, environment and directory), then exits
 * with its code. `launchedAs`: how the user starts it here, for the commands it prints.
 */
export async function runOnProcess(argv: readonly string[], launchedAs?: string): Promise<never> {
  const code = await runCli({
    ...(launchedAs === undefined ? {} : { launchedAs }),
    argv: [...argv],
    env: process.env,
    cwd: process.cwd(),
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
  });
  // Kept-alive HTTP connections and the like must not hold the exit up; what was written must get out.
  await Promise.all([drain(process.stdout), drain(process.stderr)]);
  process.exit(code);
}
