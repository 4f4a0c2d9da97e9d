import { readdir, readFile, readlink } from "node:fs/promises";

/**
 * Counts the processes of the sandbox `bwrap` (process `pid`, seen from the host) started, that
 * is the members of its pid namespace, every `intervalMs` (default 100), and calls `onExceeded`
 * once when there are more than `maxProcesses`. For where no kernel limit holds the sandbox
 * (`ProcessLimit` `none`: root without a pids cgroup): it reacts, so a fork bomb may pass the
 * limit for an interval, but killing the namespace ends all of it at once. Returns the function
 * that stops watching.
 */
export function watchProcessCount(options: {
  pid: number;
  maxProcesses: number;
  onExceeded: (count: number) => void;
  intervalMs?: number;
}): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const check = async (): Promise<void> => {
    const count = await namespaceSize(options.pid);
    if (stopped) return;
    if (count > options.maxProcesses) {
      stopped = true;
      options.onExceeded(count);
      return;
    }
    timer = setTimeout(() => void check(), options.intervalMs ?? 100);
  };
  timer = setTimeout(() => void check(), options.intervalMs ?? 100);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

// bwrap's child is the namespace's first process; every process whose pid namespace is the
// same as that child's is one of the sandbox's.
async function namespaceSize(pid: number): Promise<number> {
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8").catch(() => "");
  const first = children.trim().split(/\s+/)[0];
  if (first === undefined || first === "") return 0;
  const namespace = await readlink(`/proc/${first}/ns/pid`).catch(() => undefined);
  if (namespace === undefined) return 0;
  const entries = await readdir("/proc").catch(() => [] as string[]);
  let count = 0;
  await Promise.all(
    entries.map(async (entry) => {
      if (!/^\d+$/.test(entry)) return;
      if ((await readlink(`/proc/${entry}/ns/pid`).catch(() => undefined)) === namespace) count++;
    }),
  );
  return count;
}
