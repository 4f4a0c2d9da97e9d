// Starts worker.ts as a real process (Node 24 from the devDependency, which runs TypeScript) and
// kills it with SIGKILL.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const node = `${root}node_modules/.bin/node`;

export type WorkerProcess = {
  pid: number;
  port: number;
  /** SIGKILLs the worker (if it still runs) and resolves once it is gone. */
  kill: () => Promise<void>;
  /** What the worker wrote to stderr (errors only). */
  stderr: () => string;
};

export async function startWorker(dir: string): Promise<WorkerProcess> {
  const child = spawn(node, ["--conditions=simple-agent-loop-source", "test/restate/worker.ts", dir], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const match = /\{"port":(\d+)\}/.exec(stdout);
      if (match !== null) resolve(Number(match[1]));
    });
    child.once("exit", (code, signal) =>
      reject(new Error(`worker exited (${signal ?? code}) before listening:\n${stderr}`)),
    );
  });
  return {
    pid: child.pid!,
    port,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
    stderr: () => stderr,
  };
}
