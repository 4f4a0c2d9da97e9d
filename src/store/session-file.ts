import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  statSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { setSessionId, type Session } from "../session.ts";
import { bindSession } from "./binding.ts";
import { blobDirectory, entryFromBlobs, fileBlobStore } from "./blobs.ts";
import { replayEntries, restoreKeptOutputs, type LogEntry } from "./entries.ts";
import { parseJsonl, type JsonlContent } from "./jsonl.ts";
import { acquireLock } from "./lock.ts";
import { createLogWriter, type SyncMode } from "./log-writer.ts";
import { isStoreError, StoreError } from "./store-error.ts";
import { checkStoreOptions } from "./store-options.ts";

export type LoadSessionOptions = {
  /** Told about what reading recovered from (a torn last line). Default: `console.warn`. */
  onWarning?: (message: string) => void;
};

export type OpenSessionOptions = LoadSessionOptions & {
  /** When appends are forced to the disk: `"turn"` (default), `"every-entry"` or `"off"`; see `SyncMode`. */
  sync?: SyncMode;
};

/**
 * The session stored in the JSON Lines log at `path` (an empty session if there is no file yet;
 * it is created with owner-only permissions, and so are missing directories), bound to the file: every change the library makes
 * to it (a message entering through the loop or `extendSession`/`send`, a compaction, an approval
 * mark or decision) is appended the moment it happens, before the loop calls a model or runs a
 * tool. Run `agentLoop` on it to record the run; open it again later and run the loop to resume
 * in the same file. Close it with `closeSession`.
 *
 * One writer at a time: throws a `locked` StoreError while another process (or this one) has the
 * file open, whatever path names it (the lock belongs to the real file a symbolic link leads to;
 * a file with several hard links is refused as `invalid-argument`, since no name-based lock can
 * cover all of them). Only regular files: a FIFO, a device or a directory is an `invalid-argument`
 * StoreError at once, with no lock left behind. A torn last line (a crash mid-write) is reported to `onWarning` and cut off the file
 * before the next append; any other unreadable line throws a `malformed` StoreError naming the
 * file and line, leaving the file as it is. Entries of unknown types and unknown fields are kept.
 */
export async function openSession(path: string, options: OpenSessionOptions = {}): Promise<Session> {
  checkStoreOptions("openSession", options);
  // The lock file goes next to the log, so the directory must exist before the lock is taken.
  mkdirSync(dirname(resolve(path)), { recursive: true, mode: 0o700 });
  const file = realFile(resolve(path));
  const existing = statOrUndefined(file);
  if (existing !== undefined) checkWritable(existing, file);
  const releaseLock = acquireLock(file);
  let fd: number | undefined;
  try {
    // Read and written through one descriptor, checked once opened: what was locked is what is read.
    fd = openSync(
      file,
      constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK | constants.O_NOFOLLOW,
      0o600,
    );
    checkWritable(fstatSync(fd), file);
    if (existing === undefined) syncDirectory(dirname(file));
    const { session, content } = readLog(readFileSync(fd), file, options.onWarning, "cut off before the next append");
    const { tail } = content;
    if (tail?.torn === true) {
      // Only the torn bytes go: every line stays a whole entry, the bytes before are untouched.
      ftruncateSync(fd, content.completeBytes);
      fsyncSync(fd);
    }
    const sync = options.sync ?? "turn";
    const writer = createLogWriter(fd, {
      path: file,
      sync,
      blobs: fileBlobStore(blobDirectory(file), { sync: sync !== "off" }),
      messages: session.messages,
      startWithNewline: tail !== undefined && !tail.torn,
      onClose: releaseLock,
    });
    bindSession(session, writer);
    // The file's base name is the session's id (`fileStore`'s `open(id)` names the file after it).
    setSessionId(session, basename(file).replace(/\.jsonl$/, ""));
    return session;
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    releaseLock();
    throw error;
  }
}

/**
 * The session stored at `path`, exactly as it was recorded: read-only, not bound, no lock taken
 * (a log being written is read up to its last complete line). Throws a `not-found` StoreError if
 * there is no file, a `malformed` one naming the file and line for an unreadable line; a torn
 * last line is left out and reported to `onWarning`.
 */
export async function loadSession(path: string, options: LoadSessionOptions = {}): Promise<Session> {
  checkStoreOptions("loadSession", options);
  const file = resolve(path);
  return readLog(await readExisting(file), file, options.onWarning, "left out").session;
}

/**
 * Every entry of the log at `path`, in order, as recorded: messages, replacements, updates, custom
 * entries (`appendEntry`), and entries of newer versions as they are. Read-only, like `loadSession`.
 */
export async function loadEntries(path: string, options: LoadSessionOptions = {}): Promise<LogEntry[]> {
  checkStoreOptions("loadEntries", options);
  const file = resolve(path);
  return readLog(await readExisting(file), file, options.onWarning, "left out").entries;
}

function readLog(
  bytes: Buffer,
  path: string,
  onWarning: ((message: string) => void) | undefined,
  fate: string,
): { session: Session; entries: LogEntry[]; content: JsonlContent } {
  const content = parseJsonl(bytes, path);
  // Beside the real file, where the writer put them, whatever name (a symbolic link) it was read by.
  const blobs = fileBlobStore(blobDirectory(realFile(path)), { sync: false });
  const records = content.records.map(({ value, line }) => {
    try {
      return { value: entryFromBlobs(value, blobs), line };
    } catch (error) {
      if (!isStoreError(error)) throw error;
      throw new StoreError(`${path}:${line}: ${error.message}`, { code: "malformed", path, line, cause: error });
    }
  });
  const { session, entries, kept } = replayEntries(records, path);
  restoreKeptOutputs(session, kept);
  const { tail } = content;
  if (tail?.torn === true) {
    const warn = onWarning ?? ((message: string) => console.warn(message));
    warn(
      `${path}:${tail.line}: partial last line (${tail.bytes} bytes), the end of a write cut short by a crash: ${fate}.`,
    );
  }
  return { session, entries, content };
}

// Opened without blocking (a FIFO would wait for a writer forever) and checked before reading.
async function readExisting(path: string): Promise<Buffer> {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT")
      throw new StoreError(`${path}: no session file there`, { code: "not-found", path, cause: error });
    throw error;
  }
  try {
    checkRegular(fstatSync(fd), path);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

// The file a path names once symbolic links are followed (for a new file: its real directory), so
// two names of one file share one lock.
function realFile(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return join(realpathSync(dirname(path)), basename(path));
  }
}

function statOrUndefined(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path);
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return undefined;
    throw error;
  }
}

function checkRegular(stats: { isFile(): boolean }, path: string): void {
  if (!stats.isFile())
    throw new StoreError(
      `${path}: not a regular file (a FIFO, a device or a directory); a session is stored in a regular file`,
      { code: "invalid-argument", path },
    );
}

function checkWritable(stats: { isFile(): boolean; nlink: number | bigint }, path: string): void {
  checkRegular(stats, path);
  if (Number(stats.nlink) > 1) {
    throw new StoreError(
      `${path}: the file has ${stats.nlink} hard links; a session's lock covers one name, so a file with several cannot be opened for writing (read it with loadSession, or remove the other links)`,
      {
        code: "invalid-argument",
        path,
      },
    );
  }
}

// A new file's name is durable only once its directory is synced. Not every platform can.
function syncDirectory(directory: string): void {
  try {
    const fd = openSync(directory, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Best effort.
  }
}
