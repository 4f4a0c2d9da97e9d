import { readdir, realpath, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { createLogReader, type LogRecord } from "./log-reader.ts";

/** One session log of a directory, as the viewer lists it. */
export type SessionSummary = {
  /** The file's name in the directory: the `file` parameter of the viewer's other endpoints. */
  file: string;
  /** The file's size in bytes. */
  size: number;
  /** Messages in the session as recorded: appended ones, less those compaction removed, plus what it inserted. */
  messages: number;
  /** ISO-8601 time of the newest entry, or the file's modification time when no entry has one. */
  lastActivity: string;
  /** The first user message, cut to 120 characters ("" if none). */
  title: string;
  /** Lines that could not be read. */
  problems: number;
};

/**
 * A function listing the session logs (`*.jsonl`, not hidden) directly in `directory` (a real
 * path: no symlink in it), newest activity first. A symlink leading out of the directory is not
 * listed. A file is read again only when its size or modification time changed.
 */
export function createSessionLister(directory: string): () => Promise<SessionSummary[]> {
  const cache = new Map<string, { key: string; summary: SessionSummary }>();
  return async () => {
    const names = (await readdir(directory)).filter(isSessionFileName);
    const summaries: SessionSummary[] = [];
    for (const name of names) {
      const path = await realpath(join(directory, name)).catch(() => undefined);
      const stats = path === undefined || dirname(path) !== directory ? undefined : await stat(path).catch(() => undefined);
      if (path === undefined || stats === undefined || !stats.isFile()) continue;
      const key = `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
      let cached = cache.get(name);
      if (cached?.key !== key) {
        cached = { key, summary: await summarize(path, name, stats.size, stats.mtime) };
        cache.set(name, cached);
      }
      summaries.push(cached.summary);
    }
    const present = new Set(names);
    for (const name of cache.keys()) if (!present.has(name)) cache.delete(name);
    return summaries.sort((a, b) => Date.parse(b.lastActivity) - Date.parse(a.lastActivity) || a.file.localeCompare(b.file));
  };
}

/** A name the viewer serves from a directory: a plain `*.jsonl` file name, not hidden, no path in it. */
export function isSessionFileName(name: string): boolean {
  return name.endsWith(".jsonl") && !name.startsWith(".") && !/[/\\\0]/.test(name);
}

/** The summary of the session log at `path`, listed as `file`. */
export async function summarizeSession(path: string, file: string): Promise<SessionSummary> {
  const stats = await stat(path);
  return summarize(path, file, stats.size, stats.mtime);
}

async function summarize(path: string, file: string, size: number, modified: Date): Promise<SessionSummary> {
  const update = await createLogReader(path).read();
  let messages = 0;
  let latest = Number.NEGATIVE_INFINITY;
  let title: string | undefined;
  for (const { entry } of update?.records ?? []) {
    const message = messageOf(entry);
    if (entry.type === "message") {
      messages++;
      if (title === undefined && message?.role === "user" && typeof message.content === "string") title = message.content;
    } else if (entry.type === "splice" && Array.isArray(entry.removed) && Array.isArray(entry.inserted)) {
      messages += entry.inserted.length - entry.removed.length;
    }
    latest = Math.max(latest, time(entry.ts), time(message?.ts));
  }
  return {
    file,
    size,
    messages,
    lastActivity: new Date(Number.isFinite(latest) ? latest : modified.getTime()).toISOString(),
    title: (title ?? "").slice(0, 120),
    problems: update?.problems.length ?? 0,
  };
}

function messageOf(entry: LogRecord["entry"]): Record<string, unknown> | undefined {
  const message = entry.message;
  return typeof message === "object" && message !== null ? (message as Record<string, unknown>) : undefined;
}

function time(value: unknown): number {
  const parsed = typeof value === "string" ? Date.parse(value) : Number.NaN;
  return Number.isNaN(parsed) ? Number.NEGATIVE_INFINITY : parsed;
}
