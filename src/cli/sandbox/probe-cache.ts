import { mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { release, version } from "node:os";
import { dirname } from "node:path";

/**
 * What the sandbox probe's answer depends on, as one string: bwrap's file (path, size, times,
 * inode: a reinstall or upgrade changes it), the kernel, the user, this process's cgroups (where
 * a pids cgroup can be made) and the kernel's switches for unprivileged user namespaces. While
 * these stay the same, bwrap runs here as it did; `undefined` where bwrap cannot be looked at.
 */
export async function probeKey(bwrap: string): Promise<string | undefined> {
  const file = await stat(bwrap).catch(() => undefined);
  if (file === undefined) return undefined;
  const read = (path: string): Promise<string | null> => readFile(path, "utf8").catch(() => null);
  return JSON.stringify({
    bwrap: [bwrap, file.size, file.mtimeMs, file.ctimeMs, file.ino],
    kernel: [release(), version()],
    user: process.getuid?.() ?? null,
    cgroup: await read("/proc/self/cgroup"),
    namespaces: await Promise.all(
      [
        "/proc/sys/user/max_user_namespaces",
        "/proc/sys/kernel/unprivileged_userns_clone",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
      ].map(read),
    ),
  });
}

/** The answer kept in `file` for `key`; `undefined` when there is none, it is for another key or the file is unreadable. */
export async function readCachedProbe(file: string, key: string): Promise<unknown> {
  try {
    const kept = JSON.parse(await readFile(file, "utf8")) as { key?: unknown; answer?: unknown };
    return kept.key === key ? kept.answer : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Keeps `answer` for `key` in `file` (private, replaced whole so that a reader never sees half of
 * it). Failures are ignored: the next start probes again.
 */
export async function writeCachedProbe(file: string, key: string, answer: unknown): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(temporary, JSON.stringify({ key, answer }), { mode: 0o600 });
    await rename(temporary, file);
  } catch {
    // A read-only home: no cache.
  }
}
