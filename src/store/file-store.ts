import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { lockHolder, type LockOwner } from "./lock.ts";
import { stopReason } from "./sql-tables.ts";
import { loadEntries, loadSession, openSession, type OpenSessionOptions } from "./session-file.ts";
import type { SessionStore } from "./session-store.ts";
import { checkStoreOptions } from "./store-options.ts";
import { restingStatusFromTail } from "./resting-status.ts";
import {
  listQuery,
  newestFirst,
  summaryTracker,
  type ListQuery,
  type SessionStatus,
  type SessionSummary,
} from "./session-summary.ts";
import { StoreError } from "./store-error.ts";

/** A `SessionStore` whose sessions are JSONL logs in one directory; `path(id)` is where one lives. */
export type FileStore = SessionStore & { path: (id: string) => string };

/**
 * Sessions as files in `directory`: id `abc` is `<directory>/abc.jsonl` (see `openSession`). The
 * directory is created on the first `open`, owner-only. Ids are 1 to 128 letters, digits, `.`,
 * `_` and `-`, not starting with `.`, so an id can never name a file outside the directory;
 * anything else throws an `invalid-argument` StoreError.
 *
 * `list` orders the files by modification time and reads only the page's files. With `status`, it
 * reads the end of each file newest first (the last turn: what waits for approval, how it ended)
 * until the page is full, and only the files that match whole. With `workspace`, it reads files
 * whole newest first until the page is full (for many thousands of sessions filtered often, a
 * database store answers from an index).
 */
export function fileStore(directory: string, options: OpenSessionOptions = {}): FileStore {
  checkStoreOptions("fileStore", options);
  const root = resolve(directory);
  const path = (id: string): string => join(root, `${checkId(id)}.jsonl`);
  return {
    path,
    open: async (id) => {
      const file = path(id);
      await mkdir(root, { recursive: true, mode: 0o700 });
      return openSession(file, options);
    },
    load: async (id) => loadSession(path(id), options),
    loadEntries: async (id) => loadEntries(path(id), options),
    list: async (listOptions) => listFiles(root, listQuery(listOptions)),
    summary: async (id) => {
      const file = path(id);
      const stats = await stat(file).catch(() => undefined);
      const summary =
        stats?.isFile() === true ? await summarize(root, { id, time: Math.floor(stats.mtimeMs) }) : undefined;
      if (summary === undefined) throw new StoreError(`${file}: no session there`, { code: "not-found", path: file });
      return summary;
    },
    // The request names the lock it is for (its holder and when it was taken): a later writer's lock never matches.
    requestStop: async (id, reason) => {
      const file = path(id);
      const holder = lockHolder(file);
      if (holder === undefined) return false;
      const request = { holder: lockToken(holder), reason: stopReason(reason) };
      await writeFile(`${file}.stop`, `${JSON.stringify(request)}\n`, { mode: 0o600 });
      return true;
    },
    stopRequested: async (id) => {
      const file = path(id);
      const holder = lockHolder(file);
      if (holder === undefined) return undefined;
      let request: unknown;
      try {
        request = JSON.parse(await readFile(`${file}.stop`, "utf8"));
      } catch {
        return undefined;
      }
      const { holder: token, reason } = (request ?? {}) as { holder?: unknown; reason?: unknown };
      return token === lockToken(holder) && typeof reason === "string" ? reason : undefined;
    },
  };
}

function lockToken(holder: LockOwner): string {
  return `${holder.hostname}:${holder.pid}:${holder.since}`;
}

async function listFiles(root: string, query: ListQuery): Promise<SessionSummary[]> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return [];
    throw error;
  }
  const ids = names
    .filter((name) => name.endsWith(".jsonl"))
    .map((name) => name.slice(0, -".jsonl".length))
    .filter((id) => idPattern.test(id));
  const dated = (
    await Promise.all(
      ids.map(async (id) => {
        const stats = await stat(join(root, `${id}.jsonl`)).catch(() => undefined);
        return stats?.isFile() === true ? [{ id, time: Math.floor(stats.mtimeMs) }] : [];
      }),
    )
  ).flat();
  dated.sort(newestFirst);
  let start = 0;
  if (query.beforeId !== undefined) {
    start = dated.findIndex((item) => item.id === query.beforeId) + 1;
    if (start === 0)
      throw new StoreError(`list: before names no stored session (${JSON.stringify(query.beforeId)})`, {
        code: "invalid-argument",
      });
  } else if (query.beforeTime !== undefined) {
    const before = query.beforeTime;
    start = dated.findIndex((item) => item.time < before);
    if (start === -1) return [];
  }
  const page: SessionSummary[] = [];
  for (const item of dated.slice(start)) {
    if (page.length === query.limit) break;
    // A status filter looks at each log's end only; the sessions that pass are read whole.
    if (query.status !== undefined) {
      const status = await statusFromTail(join(root, `${item.id}.jsonl`));
      if (status !== undefined && status !== query.status) continue;
    }
    const summary = await summarize(root, item);
    if (summary === undefined) continue;
    if (query.workspace !== undefined && summary.workspace !== query.workspace) continue;
    if (query.status !== undefined && summary.status !== query.status) continue;
    page.push(summary);
  }
  return page;
}

// The status from the log's end and the lock; `undefined` (so the whole log decides) where the end does not tell.
async function statusFromTail(file: string): Promise<SessionStatus | undefined> {
  let resting: Exclude<SessionStatus, "running"> | undefined;
  try {
    resting = await restingStatusFromTail(file);
  } catch {
    return undefined;
  }
  if (resting === undefined || resting === "paused") return resting;
  return lockHolder(file) === undefined ? resting : "running";
}

// A file that cannot be read (removed meanwhile, malformed) is listed with what is known: `error`.
async function summarize(root: string, item: { id: string; time: number }): Promise<SessionSummary | undefined> {
  const file = join(root, `${item.id}.jsonl`);
  const tracker = summaryTracker();
  let readable = true;
  try {
    for (const entry of await loadEntries(file, { onWarning: () => undefined })) tracker.add(entry);
  } catch (error) {
    if ((error as { code?: unknown }).code === "not-found") return undefined;
    readable = false;
  }
  const resting = readable ? tracker.resting() : "error";
  const holder = resting === "paused" ? undefined : lockHolder(file);
  const summary: SessionSummary = {
    id: item.id,
    lastActivity: new Date(item.time).toISOString(),
    status: holder === undefined ? resting : "running",
  };
  if (holder !== undefined) summary.owner = `${holder.hostname}:${holder.pid}`;
  const title = tracker.title();
  if (title !== undefined) summary.title = title;
  const workspace = tracker.workspace();
  if (workspace !== undefined) summary.workspace = workspace;
  return summary;
}

const idPattern = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

function checkId(id: string): string {
  if (typeof id === "string" && idPattern.test(id)) return id;
  throw new StoreError(
    `invalid session id ${JSON.stringify(id)}: use 1 to 128 letters, digits, ".", "_" or "-", not starting with "."`,
    { code: "invalid-argument" },
  );
}
