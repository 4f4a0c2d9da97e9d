import { open, type FileHandle } from "node:fs/promises";

/** An entry of a session log as read: its 1-based line number and the parsed line (a JSON object with a string `type`). */
export type LogRecord = { line: number; entry: { type: string; [field: string]: unknown } };

/**
 * Something that could not be read. With `line`: that line is not an entry (not JSON, or not an
 * object with a string `type`) and was skipped; the lines around it are read as usual. Without:
 * the file itself could not be read.
 */
export type LogProblem = { line?: number; message: string };

/**
 * What one read found since the previous one, in file order. `reset`: the records start from the
 * beginning of the file (the first read, or the file was truncated, replaced or rewritten), so
 * whatever was read before no longer holds. `missing`: there is no file at the path (no records).
 * `partial`: the file ends in an incomplete line (`bytes` long so far, numbered `line`): one being
 * written, or cut off by a crash mid-write. Each update says so while it holds; an update without
 * `partial` means the file no longer ends in one.
 */
export type LogUpdate = { reset: boolean; records: LogRecord[]; problems: LogProblem[]; missing?: true; partial?: { line: number; bytes: number } };

/**
 * A `LogUpdate` with the lines as they are in the file, not parsed: `lines[i]` is line
 * `firstLine + i` (every line, blank ones too; none holds a "\n"). `problems` holds only what
 * reading found (the file could not be read, text after an entry on its line): whoever parses the
 * lines finds the lines that are not entries.
 */
export type RawLogUpdate = Omit<LogUpdate, "records"> & { firstLine: number; lines: Buffer[] };

/**
 * Reads a session log incrementally. The first `read` returns the whole file (`reset: true`);
 * each later one only the lines completed since, or `undefined` when nothing changed. A last line
 * without its "\n" is returned once it is a whole JSON object (a line being written is not one
 * until its last byte is there; a hand-written file's last line is); otherwise it waits.
 */
export type LogReader = { read: () => Promise<LogUpdate | undefined> };

export function createLogReader(path: string): LogReader {
  const reader = createRawLogReader(path);
  return {
    async read() {
      const update = await reader.read();
      if (update === undefined) return undefined;
      const { firstLine, lines, ...rest } = update;
      const records: LogRecord[] = [];
      const problems = [...rest.problems];
      lines.forEach((bytes, index) => readLine(bytes.toString("utf8"), firstLine + index, records, problems));
      problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
      return { ...rest, records, problems };
    },
  };
}

/** A `LogReader` that leaves the lines unparsed (see `RawLogUpdate`): reading costs no decoding. */
export type RawLogReader = { read: () => Promise<RawLogUpdate | undefined> };

export function createRawLogReader(path: string): RawLogReader {
  let cursor: Cursor | undefined;
  let missing = false;
  return {
    async read() {
      let handle: FileHandle;
      try {
        handle = await open(path, "r");
      } catch (error) {
        if ((error as { code?: unknown }).code !== "ENOENT") throw error;
        cursor = undefined;
        if (missing) return undefined;
        missing = true;
        return { reset: true, firstLine: 1, lines: [], problems: [], missing: true };
      }
      try {
        missing = false;
        const stats = await handle.stat();
        const reset = cursor === undefined || cursor.ino !== stats.ino || stats.size < cursor.offset || !(await sameBytes(handle, cursor));
        if (reset) cursor = { ino: stats.ino, offset: 0, line: 0, openLine: false, head: Buffer.alloc(0), tail: Buffer.alloc(0), partialBytes: 0 };
        const current = cursor!;
        if (!reset && stats.size === current.offset && current.partialBytes === 0) return undefined;
        const firstLine = current.line + 1;
        const lines: Buffer[] = [];
        const problems: LogProblem[] = [];
        let end = current.offset;
        if (stats.size > current.offset) {
          const bytes = await readRange(handle, current.offset, stats.size);
          end = current.offset + bytes.length;
          const consumed = splitLines(bytes, current, lines, problems);
          current.offset += consumed;
          await remember(handle, current);
        }
        // Bytes after the last line read: a line still being written (or never finished).
        const partialBytes = current.openLine ? 0 : end - current.offset;
        const partialChanged = partialBytes !== current.partialBytes;
        current.partialBytes = partialBytes;
        if (!reset && lines.length === 0 && problems.length === 0 && !partialChanged) return undefined;
        const update: RawLogUpdate = { reset, firstLine, lines, problems };
        if (partialBytes > 0) update.partial = { line: current.line + 1, bytes: partialBytes };
        return update;
      } finally {
        await handle.close();
      }
    },
  };
}

/** Where reading stopped, and what the file looked like there, to notice a rewrite. */
type Cursor = {
  ino: number;
  /** Bytes consumed: whole lines (and a last line that was a whole object without "\n"). */
  offset: number;
  /** The number of the last line consumed. */
  line: number;
  /** The last line consumed had no "\n": the next bytes up to one still belong to it. */
  openLine: boolean;
  /** The first and the last bytes consumed (up to `fingerprintBytes` each). */
  head: Buffer;
  tail: Buffer;
  /** Bytes after `offset` at the last read that do not make a line yet (see `LogUpdate.partial`). */
  partialBytes: number;
};

const fingerprintBytes = 64;

// A log only grows. A file whose first or last consumed bytes differ was rewritten in place, even
// when it did not get shorter (a tool that rewrites a log after editing it).
async function sameBytes(handle: FileHandle, cursor: Cursor): Promise<boolean> {
  if (cursor.offset === 0) return true;
  const head = await readRange(handle, 0, cursor.head.length);
  if (!head.equals(cursor.head)) return false;
  const tail = await readRange(handle, cursor.offset - cursor.tail.length, cursor.offset);
  return tail.equals(cursor.tail);
}

async function remember(handle: FileHandle, cursor: Cursor): Promise<void> {
  const headLength = Math.min(fingerprintBytes, cursor.offset);
  if (cursor.head.length < headLength) cursor.head = await readRange(handle, 0, headLength);
  cursor.tail = await readRange(handle, Math.max(0, cursor.offset - fingerprintBytes), cursor.offset);
}

async function readRange(handle: FileHandle, start: number, end: number): Promise<Buffer> {
  const buffer = Buffer.alloc(end - start);
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, start + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === buffer.length ? buffer : buffer.subarray(0, filled);
}

// Splits the whole lines of `bytes` (read at `cursor`) into `lines`, advancing `cursor.line`;
// returns how many bytes were consumed. "\n" never occurs inside a UTF-8 sequence, so each line
// decodes whole.
function splitLines(bytes: Buffer, cursor: Cursor, lines: Buffer[], problems: LogProblem[]): number {
  let start = 0;
  for (let end = bytes.indexOf(10); end !== -1; start = end + 1, end = bytes.indexOf(10, start)) {
    if (cursor.openLine) {
      cursor.openLine = false;
      const text = bytes.toString("utf8", start, end);
      if (text.trim() !== "") problems.push({ line: cursor.line, message: `text after the entry on the same line: ${excerpt(text)}` });
      continue;
    }
    cursor.line++;
    lines.push(bytes.subarray(start, end));
  }
  if (start < bytes.length && !cursor.openLine) {
    const text = bytes.toString("utf8", start).trim();
    // A strict prefix of a JSON object never parses as one: its closing brace comes last.
    const whole = text.startsWith("{") && text.endsWith("}") ? parseJson(text) : undefined;
    if (whole !== undefined) {
      cursor.line++;
      cursor.openLine = true;
      lines.push(bytes.subarray(start));
      start = bytes.length;
    }
  }
  return start;
}

function readLine(text: string, line: number, records: LogRecord[], problems: LogProblem[]): void {
  const trimmed = text.trim();
  if (trimmed === "") return;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch (error) {
    problems.push({ line, message: `not valid JSON (${error instanceof Error ? error.message : String(error)}): ${excerpt(trimmed)}` });
    return;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value) || typeof (value as { type?: unknown }).type !== "string") {
    problems.push({ line, message: `not a log entry (a JSON object with a string "type"): ${excerpt(trimmed)}` });
    return;
  }
  records.push({ line, entry: value as LogRecord["entry"] });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function excerpt(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
