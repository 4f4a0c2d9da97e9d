import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { SessionLockedError } from "./store-error.ts";

/** What a lock file holds: who has the session open for writing, since when, and when that process started. */
export type LockOwner = { pid: number; hostname: string; since: string; started: string };

// Lock files this thread holds.
const held = new Set<string>();

/**
 * Takes the write lock of the session file at `path` (an absolute path): `<path>.lock`, created
 * with O_EXCL and holding a `LockOwner`. Returns the function that releases it.
 *
 * Throws a `locked` StoreError when a live process holds it (this one included, from any thread).
 * A lock whose process is gone (same host, pid not running, or running but started after the
 * holder did, by the start times Linux keeps: a reused pid) is stale and taken over; a lock from another host
 * cannot be checked and is never taken over, nor is one whose content cannot be read: the error
 * says which file to delete once no writer is left.
 */
export function acquireLock(path: string): () => void {
  const lockPath = `${path}.lock`;
  const owner: LockOwner = {
    pid: process.pid,
    hostname: hostname(),
    since: new Date().toISOString(),
    started: new Date(processStart()).toISOString(),
  };
  const content = `${JSON.stringify(owner)}\n`;
  // Each round either takes the lock, throws, or removes a stale lock; a third round means other
  // processes keep taking it from under us.
  for (let round = 0; round < 3; round++) {
    if (tryCreate(lockPath, content)) {
      held.add(lockPath);
      return () => release(lockPath, content);
    }
    const text = readText(lockPath);
    if (text === undefined) continue; // released meanwhile
    const holder = parseOwner(text);
    if (holder === undefined || !isStale(holder, lockPath)) throw lockedError(path, lockPath, holder);
    takeOver(path, lockPath, text);
  }
  throw new SessionLockedError(`${path}: could not take the lock ${lockPath}: other processes keep taking it`, {
    path,
  });
}

/**
 * Who holds the write lock of the session file at `path`, if a live process does (a stale or
 * unreadable lock file: undefined). For listing; takes nothing.
 */
export function lockHolder(path: string): LockOwner | undefined {
  const lockPath = `${path}.lock`;
  const text = readText(lockPath);
  const holder = text === undefined ? undefined : parseOwner(text);
  return holder === undefined || isStale(holder, lockPath) ? undefined : holder;
}

function tryCreate(lockPath: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(lockPath, "wx", 0o600);
  } catch (error) {
    if (codeOf(error) === "EEXIST") return false;
    throw error;
  }
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return true;
}

function isStale(holder: LockOwner, lockPath: string): boolean {
  if (holder.hostname !== hostname()) return false;
  if (holder.pid === process.pid) return !held.has(lockPath) && !isThisProcess(holder);
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: the process exists, it is someone else's.
    return codeOf(error) === "ESRCH";
  }
  // Alive: the holder, unless that pid now names a process started after the holder did (the
  // pid was reused). Where start times cannot be read, a live pid holds the lock.
  const started = startOf(holder.pid);
  const recorded = Date.parse(holder.started);
  return started !== undefined && Number.isFinite(recorded) && started > recorded + startTolerance;
}

// Start times come from clock ticks (10 ms) and the boot time (1 s): a second apart is the same start.
const startTolerance = 2000;

// Only the holder of `<lock>.takeover` may delete a stale lock, and it reads the lock again under
// that guard: the file it deletes is the stale one it judged, not a lock another process created
// in the meantime. The guard is held for a few system calls.
function takeOver(path: string, lockPath: string, staleText: string): void {
  const guardPath = `${lockPath}.takeover`;
  let guard: number;
  try {
    guard = openSync(guardPath, "wx", 0o600);
  } catch (error) {
    if (codeOf(error) !== "EEXIST") throw error;
    throw new SessionLockedError(
      `${path}: another process is taking over its stale lock ${lockPath} right now. If no process is, delete ${guardPath}.`,
      { path },
    );
  }
  try {
    if (readText(lockPath) === staleText) unlinkSync(lockPath);
  } finally {
    closeSync(guard);
    unlinkSync(guardPath);
  }
}

// Our pid, and our start time: another thread of this process. Our pid and another start time: an
// earlier process that had the same pid (a container's pid 1 after a restart), gone.
function isThisProcess(holder: LockOwner): boolean {
  return Math.abs(Date.parse(holder.started) - processStart()) < 100;
}

function processStart(): number {
  return startOf(process.pid) ?? Date.now() - process.uptime() * 1000;
}

/**
 * When process `pid` started (ms since the epoch), from Linux's /proc: its start in clock ticks
 * after boot (field 22 of /proc/<pid>/stat; USER_HZ is 100 on every Linux architecture Node runs
 * on) and the boot time. Undefined elsewhere or when it cannot be read.
 */
function startOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
    const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
    const boot = Number(/^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))?.[1]);
    return Number.isFinite(ticks) && Number.isFinite(boot) ? boot * 1000 + ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

function release(lockPath: string, content: string): void {
  if (!held.delete(lockPath)) return;
  // Never delete a lock that is not ours.
  if (readText(lockPath) === content) unlinkSync(lockPath);
}

function lockedError(path: string, lockPath: string, holder: LockOwner | undefined): SessionLockedError {
  let message: string;
  if (holder === undefined) {
    message = `${path} is locked by ${lockPath}, whose owner cannot be read. If no process has this session open, delete ${lockPath}.`;
  } else if (
    holder.pid === process.pid &&
    holder.hostname === hostname() &&
    (held.has(lockPath) || isThisProcess(holder))
  ) {
    message = `${path} is already open for writing in this process; close it (closeSession) before opening it again, or read it with loadSession.`;
  } else {
    const where =
      holder.hostname === hostname() ? "" : ` on host ${holder.hostname} (its liveness cannot be checked from here)`;
    message =
      `${path} is open for writing by process ${holder.pid}${where} since ${holder.since}: a session has one writer at a time. ` +
      `Close it there first; if that process is gone, delete ${lockPath}.`;
  }
  return new SessionLockedError(
    message,
    holder === undefined ? { path } : { path, owner: `${holder.hostname}:${holder.pid}` },
  );
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if (codeOf(error) === "ENOENT") return undefined;
    throw error;
  }
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockOwner> | null;
    if (
      typeof value?.pid === "number" &&
      typeof value.hostname === "string" &&
      typeof value.since === "string" &&
      typeof value.started === "string"
    ) {
      return value as LockOwner;
    }
  } catch {
    // Unreadable: treated as held.
  }
  return undefined;
}

function codeOf(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}
