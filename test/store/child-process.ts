// Starts a crash child (crash-child.ts, or another script of the same protocol: JSON lines
// "opened", "stopped", "done" on stdout) as a real process and kills it with SIGKILL.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

export type ChildRun = {
  pid: number;
  /** Resolves when the child has opened the session file (or exited first). */
  opened: Promise<void>;
  /** Resolves when the child stops at its point (true) or exits first (false). */
  stopped: Promise<boolean>;
  /** SIGKILLs the child (if it still runs) and resolves once it is gone: whether the kill ended it. */
  kill: () => Promise<boolean>;
  /** Resolves when the child has exited: whether a SIGKILL ended it. */
  exited: Promise<boolean>;
};

/**
 * Runs the crash agent in a child process (see crash-child.ts for `point`). `script`: another
 * child of the same protocol (task-crash-child.ts); `env`: added to this process's environment.
 */
export function startChild(
  sessionPath: string,
  effectsPath: string,
  point = "none",
  options: { script?: string; env?: Record<string, string> } = {},
): ChildRun {
  const script = options.script ?? "test/store/crash-child.ts";
  const child = spawn(
    process.execPath,
    ["--conditions=simple-agent-loop-source", script, sessionPath, effectsPath, point],
    {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      ...(options.env === undefined ? {} : { env: { ...process.env, ...options.env } }),
    },
  );
  let stdout = "";
  let stderr = "";
  let resolveStopped: (stopped: boolean) => void = () => {};
  let resolveOpened: () => void = () => {};
  const stopped = new Promise<boolean>((resolve) => (resolveStopped = resolve));
  const opened = new Promise<void>((resolve) => (resolveOpened = resolve));
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    if (stdout.includes('"opened"')) resolveOpened();
    if (stdout.includes('"stopped"')) resolveStopped(true);
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<boolean>((resolve, reject) => {
    // "close", not "exit": a child's last stdout line may still be on its way when it has exited.
    child.on("close", (code, signal) => {
      resolveOpened();
      resolveStopped(false);
      if (signal === "SIGKILL") resolve(true);
      else if (code === 0 && stdout.includes('"done"')) resolve(false);
      else reject(new Error(`${script} (${point}) exited with ${signal ?? code}:\n${stderr}`));
    });
  });
  return {
    pid: child.pid!,
    opened,
    stopped,
    exited,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      return exited;
    },
  };
}

/**
 * Runs the child until it stops at `point` (then kills it there) or, for `timer:<ms>`, kills it
 * that long after it opened the session file. Resolves with whether the kill ended it.
 */
export async function crashChild(sessionPath: string, effectsPath: string, point: string): Promise<boolean> {
  const [kind, argument] = point.split(":");
  if (kind === "timer") {
    const run = startChild(sessionPath, effectsPath, "none");
    await run.opened;
    const timer = setTimeout(() => void run.kill(), Number(argument));
    try {
      return await run.exited;
    } finally {
      clearTimeout(timer);
    }
  }
  const run = startChild(sessionPath, effectsPath, point);
  await run.stopped;
  return run.kill();
}
