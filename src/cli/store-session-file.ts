import { appendFileSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { blobDirectory, entryToBlobs, fileBlobStore, type BlobStore } from "../store/blobs.ts";
import { postgresStore, sqliteStore, type LogEntry, type PostgresStore, type SqliteStore } from "../store/index.ts";
import { CliError } from "./cli-error.ts";

/** A session of a database store mirrored into a private JSONL file, for the viewer; `close` stops and removes it. */
export type StoreSessionFile = { path: string; close: () => Promise<void> };

/**
 * Whether `location` names a session in a database store: `postgres://…/<database>/<id>` (or
 * `postgresql://`) or `sqlite:<file>/<id>`.
 */
export function isStoreLocation(location: string): boolean {
  return /^postgres(ql)?:\/\//.test(location) || location.startsWith("sqlite:");
}

/**
 * Copies the session at `location` (see `isStoreLocation`; a relative SQLite path is taken from
 * `cwd`) into `<id>.jsonl` in a new owner-only temporary directory, entry for entry as the file
 * store writes them (images and files as blobs in `<id>.blobs/`, which the viewer serves), and
 * appends what the store records after it every `pollMs`, so the viewer follows a running
 * session. Throws a `CliError` for a location it cannot read.
 */
export async function storeSessionFile(location: string, cwd: string, pollMs = 1000): Promise<StoreSessionFile> {
  const { store, id } = openLocation(location, cwd);
  let written = 0;
  const copy = async (): Promise<LogEntry[]> => {
    const entries = await store.loadEntries(id);
    return entries.slice(written);
  };
  let first: LogEntry[];
  try {
    first = await copy();
  } catch (error) {
    await store.close();
    throw new CliError(`${redacted(location)}: ${error instanceof Error ? error.message : String(error)}`);
  }
  // Real: the viewer serves a blob only from the very directory beside the log.
  const directory = realpathSync(mkdtempSync(join(tmpdir(), "simple-agent-loop-view-")));
  const path = join(directory, `${id}.jsonl`);
  const blobs = fileBlobStore(blobDirectory(path), { sync: false });
  const lines = (entries: readonly LogEntry[]): string => logLines(entries, blobs);
  writeFileSync(path, lines(first), { mode: 0o600 });
  written = first.length;
  let polling: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    polling = polling.then(async () => {
      const more = await copy().catch(() => []);
      if (more.length === 0) return;
      appendFileSync(path, lines(more));
      written += more.length;
    });
  }, pollMs);
  return {
    path,
    close: async () => {
      clearInterval(timer);
      await polling;
      await store.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

function openLocation(location: string, cwd: string): { store: SqliteStore | PostgresStore; id: string } {
  if (location.startsWith("sqlite:")) {
    const rest = location.slice("sqlite:".length);
    const slash = rest.lastIndexOf("/");
    if (slash <= 0 || slash === rest.length - 1)
      throw new CliError(`${location}: name a session as sqlite:<database file>/<session id>`);
    return { store: sqliteStore(resolve(cwd, rest.slice(0, slash))), id: rest.slice(slash + 1) };
  }
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    throw new CliError(`${redacted(location)}: not a PostgreSQL URL`);
  }
  const segments = url.pathname.split("/").filter(Boolean);
  const id = segments.pop();
  if (id === undefined || segments.length === 0)
    throw new CliError(`${redacted(location)}: name a session as postgres://…/<database>/<session id>`);
  url.pathname = `/${segments.join("/")}`;
  return { store: postgresStore({ connectionString: url.toString() }), id: decodeURIComponent(id) };
}

function logLines(entries: readonly LogEntry[], blobs: BlobStore): string {
  return entries.map((entry) => `${JSON.stringify(entryToBlobs(entry, blobs))}\n`).join("");
}

// A location as shown in messages: a URL's credentials left out.
function redacted(location: string): string {
  return location.replace(/\/\/[^@/]*@/, "//…@");
}
