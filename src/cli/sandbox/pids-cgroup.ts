import { mkdir, readdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * A directory under which this process can make pids cgroups (cgroup v1's `pids` hierarchy, or
 * v2 where this process's cgroup already delegates the `pids` controller), found by making and
 * removing one; `undefined` where none can be made (no permission, no controller). Cgroups left
 * by CLI processes that died (SIGKILL leaves them, empty) are removed on the way.
 */
export async function findPidsCgroupParent(): Promise<string | undefined> {
  const own = await readFile("/proc/self/cgroup", "utf8").catch(() => "");
  const candidates: string[] = [];
  for (const line of own.split("\n")) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (path === undefined) continue;
    if (controllers!.split(",").includes("pids")) candidates.push(join("/sys/fs/cgroup/pids", path));
    if (controllers === "") candidates.push(join("/sys/fs/cgroup", path));
  }
  for (const parent of candidates) {
    await removeAbandonedCgroups(parent);
    const probe = join(parent, `${prefix}${process.pid}-probe`);
    try {
      await mkdir(probe);
    } catch {
      continue;
    }
    try {
      await writeFile(join(probe, "pids.max"), "1");
      return parent;
    } catch {
      // No pids controller here.
    } finally {
      await rmdir(probe).catch(() => undefined);
    }
  }
  return undefined;
}

/** A pids cgroup for one command: put a process in it by writing its pid to `procs`; `remove` once it is empty. */
export type PidsCgroup = { procs: string; remove: () => Promise<void> };

/** Makes a pids cgroup under `parent` (see `findPidsCgroupParent`) that lets at most `maxProcesses` processes exist in it at once. */
export async function createPidsCgroup(parent: string, maxProcesses: number): Promise<PidsCgroup> {
  const path = join(parent, `${prefix}${process.pid}-${++made}`);
  await mkdir(path);
  try {
    await writeFile(join(path, "pids.max"), String(maxProcesses));
  } catch (error) {
    await rmdir(path).catch(() => undefined);
    throw error;
  }
  return {
    procs: join(path, "cgroup.procs"),
    remove: async () => {
      // The last processes of a killed pid namespace may take a moment to leave it.
      for (let attempt = 0; attempt < 50; attempt++) {
        try {
          await rmdir(path);
          return;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EBUSY") return;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    },
  };
}

const prefix = "simple-agent-loop-";

let made = 0;

/**
 * Removes the cgroups under `parent` left by CLI processes that are gone: such a cgroup is empty
 * (its pid namespace died with it) and nobody's. Never rejects.
 */
export async function removeAbandonedCgroups(parent: string): Promise<void> {
  const entries = await readdir(parent).catch(() => [] as string[]);
  for (const entry of entries) {
    const owner = /^simple-agent-loop-(\d+)-/.exec(entry)?.[1];
    if (owner === undefined || isRunning(Number(owner))) continue;
    await rmdir(join(parent, entry)).catch(() => undefined);
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
