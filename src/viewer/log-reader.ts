import { jsonNestedDeeperThan, maxJsonDepth } from "../session.ts";
import { createHash, type Hash } from "node:crypto";
import { lstat, type FileHandle } from "node:fs/promises";
import {
  defaultReadLimits,
  excerpt,
  readLines,
  readRange,
  startCursor,
  type LineCursor,
  type LogProblem,
  type ReadLimits,
} from "./log-lines.ts";
import { openLogFile } from "./open-log-file.ts";

/** An entry of a session log as read: its 1-based line number and the parsed line (a JSON object with a string `type`). */
export type LogRecord = { line: number; entry: { type: string; [field: string]: unknown } };

export type { LogProblem } from "./log-lines.ts";

/**
 * What one read found since the previous one, in file order. `reset`: the records start from the
 * beginning of the file (the first read, or the file was truncated, replaced or rewritten), so
 * whatever was read before no longer holds. `missing`: there is no file at the path (no records).
 * `partial`: the file ends in an incomplete line (`bytes` long so far, numbered `line`): one being
 * written, or cut off by a crash mid-write. Each update says so while it holds; an update without
 * `partial` means the file no longer ends in one.
 */
export type LogUpdate = {
  reset: boolean;
  records: LogRecord[];
  problems: LogProblem[];
  missing?: true;
  partial?: { line: number; bytes: number };
};

/**
 * A `LogUpdate` with the lines as they are in the file, not parsed: `lines[i]` is line
 * `firstLine + i` (every line, blank ones too; none holds a "\n"). `problems` holds only what
 * reading found (the file could not be read, text after an entry on its line, a line too long to
 * read, given as a blank line): whoever parses the lines finds the lines that are not entries. `cursor`: where reading
 * stands after this update, in the file with inode `ino` (none after a failed read). `more`: the read stopped before the end
 * of the file, to hold little at a time; read again for the rest.
 */
export type RawLogUpdate = Omit<LogUpdate, "records"> & {
  firstLine: number;
  lines: Buffer[];
  cursor?: LineCursor;
  ino?: number;
  more?: true;
};

/**
 * Reads a session log incrementally, leaving the lines unparsed (see `RawLogUpdate`): reading
 * costs no decoding. The first `read` returns the file from its start (`reset: true`); each later
 * one what follows, or `undefined` when nothing changed; each scans about `limits.readBytes` at
 * most (`more`: there is more to read now). A last line without its "\n" is returned once it is a
 * whole JSON object (a line being written is not one until its last byte is there; a hand-written
 * file's last line is); otherwise it waits, and is not read again until the file grows. A line
 * longer than the limit is a problem, not a line. A rewrite is noticed by inode and size, and by
 * content: when the modification or change time moves with the size unchanged, a checksum of
 * everything read so far is compared with the file's bytes, so a rewrite of the same length (a
 * token redacted in place, `sed -i`, even with the times put back by `touch -r`: the change time
 * cannot be set) starts over. The file is opened once per read, without following a symbolic link
 * swapped in at its path (see `openLogFile`), and read only through that descriptor.
 */
export type RawLogReader = { read: () => Promise<RawLogUpdate | undefined> };

export function createRawLogReader(path: string, limits: ReadLimits = defaultReadLimits): RawLogReader {
  let state: ReaderState | undefined;
  let missing = false;
  return {
    async read() {
      let handle: FileHandle;
      try {
        // Most reads find nothing new: a stat tells, without opening the file.
        const quick = await lstat(path);
        if (state !== undefined && sameStats(quick, state) && state.cursor.scanned >= quick.size) return undefined;
        handle = await openLogFile(path);
      } catch (error) {
        if ((error as { code?: unknown }).code !== "ENOENT") throw error;
        state = undefined;
        if (missing) return undefined;
        missing = true;
        return { reset: true, firstLine: 1, lines: [], problems: [], missing: true, cursor: startCursor() };
      }
      try {
        missing = false;
        const stats = await handle.stat();
        const change = state === undefined ? "rewritten" : await changeOf(handle, state, stats);
        if (change === "none") return undefined;
        if (change === "rewritten")
          state = {
            ino: stats.ino,
            size: 0,
            mtimeMs: stats.mtimeMs,
            ctimeMs: stats.ctimeMs,
            cursor: startCursor(),
            checksum: createHash("sha256"),
            head: Buffer.alloc(0),
            tail: Buffer.alloc(0),
            partialBytes: 0,
            wholeCheckDue: 0,
          };
        const current = state!;
        const reset = change === "rewritten";
        const firstLine = current.cursor.line + 1;
        const read = await readLines(handle, current.cursor, stats.size, limits, (bytes) => scanned(current, bytes));
        current.cursor = read.cursor;
        current.size = stats.size;
        current.mtimeMs = stats.mtimeMs;
        current.ctimeMs = stats.ctimeMs;
        const update: RawLogUpdate = {
          reset,
          firstLine,
          lines: read.lines,
          problems: read.problems,
          cursor: { ...read.cursor },
          ino: stats.ino,
        };
        if (read.more) {
          update.more = true;
          return update;
        }
        // Bytes after the last line read: a line still being written (or never finished).
        const partialBytes = read.cursor.openLine ? 0 : read.cursor.scanned - read.cursor.offset;
        const partialChanged = partialBytes !== current.partialBytes;
        current.partialBytes = partialBytes;
        if (partialBytes > 0) update.partial = { line: read.cursor.line + 1, bytes: partialBytes };
        if (!reset && read.lines.length === 0 && read.problems.length === 0 && !partialChanged) return undefined;
        return update;
      } finally {
        await handle.close();
      }
    },
  };
}

/** What a reader knows of the file it reads, to notice a change. */
type ReaderState = {
  ino: number;
  /** The file's size, modification and change times when last read. */
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  cursor: LineCursor;
  /** A running checksum of the bytes scanned so far (up to `cursor.scanned`). */
  checksum: Hash;
  /** The first and the last bytes scanned (up to `fingerprintBytes` each): a cheap check as the log grows. */
  head: Buffer;
  tail: Buffer;
  /** Bytes after the cursor at the last read that do not make a line yet (see `LogUpdate.partial`). */
  partialBytes: number;
  /** When (ms since the epoch) a growing file's whole checksum is compared next (see `changeOf`). */
  wholeCheckDue: number;
};

type FileTimes = { ino: number; size: number; mtimeMs: number; ctimeMs: number };

function sameStats(stats: FileTimes, state: ReaderState): boolean {
  return (
    stats.ino === state.ino &&
    stats.size === state.size &&
    stats.mtimeMs === state.mtimeMs &&
    stats.ctimeMs === state.ctimeMs
  );
}

// A log only grows: what was read must still be there, byte for byte. A shorter file or another
// inode was rewritten. A file that grew is checked at both ends of what was read at every look
// (cheap: a log being written grows all the time), and compared whole, by checksum, now and then:
// a redaction in the middle that lands with an append shows there, within a second for a small
// log, a second more per 16 MB read. One whose times moved with its size unchanged is compared
// whole at once: a write in place shows in the change time, which no one can set back.
async function changeOf(
  handle: FileHandle,
  state: ReaderState,
  stats: FileTimes,
): Promise<"none" | "grown" | "rewritten"> {
  if (stats.ino !== state.ino || stats.size < state.cursor.scanned) return "rewritten";
  const pending = state.cursor.scanned < stats.size;
  const touched = stats.mtimeMs !== state.mtimeMs || stats.ctimeMs !== state.ctimeMs;
  if (stats.size !== state.size) {
    if (!(await sameEnds(handle, state))) return "rewritten";
    const now = Date.now();
    if (now >= state.wholeCheckDue) {
      if (!(await sameContent(handle, state))) return "rewritten";
      state.wholeCheckDue = now + 1000 + Math.floor(state.cursor.scanned / (16 * 1024 * 1024)) * 1000;
    }
  } else if (touched && !(await sameContent(handle, state))) return "rewritten";
  state.mtimeMs = stats.mtimeMs;
  state.ctimeMs = stats.ctimeMs;
  return pending ? "grown" : "none";
}

async function sameContent(handle: FileHandle, state: ReaderState): Promise<boolean> {
  const checksum = createHash("sha256");
  const end = state.cursor.scanned;
  for (let start = 0; start < end; start += checksumChunkBytes) {
    const bytes = await readRange(handle, start, Math.min(end, start + checksumChunkBytes));
    if (bytes.length < Math.min(end, start + checksumChunkBytes) - start) return false;
    checksum.update(bytes);
  }
  return checksum.digest().equals(state.checksum.copy().digest());
}

const checksumChunkBytes = 1024 * 1024;

const fingerprintBytes = 64;

async function sameEnds(handle: FileHandle, state: ReaderState): Promise<boolean> {
  const end = state.cursor.scanned;
  if (end === 0) return true;
  const head = await readRange(handle, 0, state.head.length);
  if (!head.equals(state.head)) return false;
  return (await readRange(handle, end - state.tail.length, end)).equals(state.tail);
}

// What was read is remembered as it is read: its checksum and its first and last bytes.
function scanned(state: ReaderState, bytes: Buffer): void {
  state.checksum.update(bytes);
  if (state.head.length < fingerprintBytes)
    state.head = Buffer.concat([state.head, bytes.subarray(0, fingerprintBytes - state.head.length)]);
  state.tail =
    bytes.length >= fingerprintBytes
      ? Buffer.from(bytes.subarray(bytes.length - fingerprintBytes))
      : Buffer.concat([state.tail, bytes]).subarray(-fingerprintBytes);
}

/** Parses line number `line` of a log: an entry goes to `records`; a line that is none, to `problems` (a blank line is neither). */
export function parseLogLine(text: string, line: number, records: LogRecord[], problems: LogProblem[]): void {
  const trimmed = text.trim();
  if (trimmed === "") return;
  if (jsonNestedDeeperThan(trimmed)) {
    problems.push({ line, message: `nested more than ${maxJsonDepth} levels deep: ${excerpt(trimmed)}` });
    return;
  }
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch (error) {
    problems.push({
      line,
      message: `not valid JSON (${excerpt(error instanceof Error ? error.message : String(error))}): ${excerpt(trimmed)}`,
    });
    return;
  }
  if (
    typeof value !== "object" ||
    value === null ||
    Array.isArray(value) ||
    typeof (value as { type?: unknown }).type !== "string"
  ) {
    problems.push({ line, message: `not a log entry (a JSON object with a string "type"): ${excerpt(trimmed)}` });
    return;
  }
  records.push({ line, entry: value as LogRecord["entry"] });
}
