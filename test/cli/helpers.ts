import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repositoryRoot, sharedCompileCache } from "./terminal.ts";

/** A fresh temporary directory (real path), removed by the returned `remove`. */
export function tempDirectory(prefix: string): { path: string; remove: () => void } {
  const path = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** A minimal environment for the CLI: no provider keys from the machine, sessions under `home`. */
export function cliEnvironment(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, SIMPLE_AGENT_LOOP_HOME: home, ...extra };
}

export type CliRun = { code: number; stdout: string; stderr: string };

/** Runs the CLI as a child process without a terminal (stdin closed), to the end. */
export function runCli(
  args: string[],
  options: { cwd: string; env: Record<string, string>; input?: string; timeoutMs?: number },
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ["--conditions=simple-agent-loop-source", `${repositoryRoot}src/cli/main.ts`, ...args],
      {
        cwd: options.cwd,
        env: { ...sharedCompileCache, ...options.env },
        timeout: options.timeoutMs ?? 60_000,
        maxBuffer: 10_000_000,
      },
      (error, stdout, stderr) => {
        if (error !== null && typeof error.code !== "number") reject(Object.assign(error, { stdout, stderr }));
        else resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr });
      },
    );
    child.stdin?.end(options.input ?? "");
  });
}

/** Whether a process runs; a zombie (killed, not yet reaped) counts as dead. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** A $BROWSER (./fake-browser.ts) that follows the page it is given to the redirect, logging each URL to `<directory>/opened.log`. */
export function fakeBrowser(directory: string): { command: string; log: string } {
  const command = join(directory, "browser.sh");
  writeFileSync(command, `#!/bin/sh\nexec "${process.execPath}" "${repositoryRoot}test/cli/fake-browser.ts" "$@"\n`);
  chmodSync(command, 0o755);
  return { command, log: join(directory, "opened.log") };
}
