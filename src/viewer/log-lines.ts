import type { FileHandle } from "node:fs/promises";
import { openLogFile } from "./open-log-file.ts";

/**
 * Something that could not be read. With `line`: that line is not an entry (not JSON, or not an
 * object with a string `type`) and was skipped; the lines around it are read as usual. Without:
 * the file itself could not be read.
 */
export type LogProblem = { line?: number; message: string };

/**
 * A place between lines of a log, and what is known of the bytes after it. Two readers that read
 * the same bytes from the same cursor split them into the same lines, numbered alike.
 */
export type LineCursor = {
  /** Bytes consumed: whole lines (and a last line that was a whole object without "\n"). */
  offset: number;
  /** The number of the last line consumed. */
  line: number;
  /** The last line consumed had no "\n": the next bytes up to one still belong to it. */
  openLine: boolean;
  /** Bytes from `offset` to here hold no "\n": a line being written is not scanned again. */
  scanned: number;
};

/** How much a read may hold. Every size is in bytes. */
export type ReadLimits = {
  /** A read stops after scanning about this many bytes (it goes on with the next read). */
  readBytes: number;
  /** A longer line is not read: it is reported as a problem and skipped. */
  maxLineBytes: number;
};

export const defaultReadLimits: ReadLimits = { readBytes: 1024 * 1024, maxLineBytes: 16 * 1024 * 1024 };

/** The cursor at the start of a file. */
export function startCursor(): LineCursor {
  return { offset: 0, line: 0, openLine: false, scanned: 0 };
}

/** What `readLines` found: the lines, in order, numbered from the cursor's `line + 1`. */
export type LinesRead = { lines: Buffer[]; problems: LogProblem[]; cursor: LineCursor; more: boolean };

/**
 * Reads the whole lines of `handle` after `from`, up to byte `end`, scanning at most about
 * `limits.readBytes` bytes (`more`: call again from the returned cursor). A last piece without its
 * "\n" is a line only when it is a whole JSON object; otherwise it waits, and is not scanned again.
 * A line over `limits.maxLineBytes` is never held in memory: it becomes a problem naming it, and
 * a blank line in `lines`. `onScanned` gets every byte scanned, once and in file order: the bytes
 * from `from.scanned` on (a checksum of what was read).
 */
export async function readLines(
  handle: FileHandle,
  from: LineCursor,
  end: number,
  limits: ReadLimits,
  onScanned?: (bytes: Buffer) => void,
): Promise<LinesRead> {
  const cursor = { ...from, scanned: Math.max(from.scanned, from.offset) };
  const lines: Buffer[] = [];
  const problems: LogProblem[] = [];
  const budgetEnd = cursor.scanned + limits.readBytes;
  const scannedBefore = cursor.scanned;
  let last: { start: number; bytes: Buffer } | undefined;
  let shortened = false;
  while (cursor.scanned < end && cursor.scanned < budgetEnd && !shortened) {
    const start = cursor.scanned;
    const wanted = Math.min(end, start + chunkBytes) - start;
    const chunk = await readRange(handle, start, start + wanted);
    // The file got shorter while read: the next read finds out how.
    shortened = chunk.length < wanted;
    if (chunk.length === 0) break;
    onScanned?.(chunk);
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, newline + 1)) {
      await takeLine(handle, cursor, start + newline, { start, bytes: chunk }, limits, lines, problems);
      cursor.offset = start + newline + 1;
    }
    cursor.scanned = start + chunk.length;
    last = { start, bytes: chunk };
  }
  const more = cursor.scanned < end && !shortened;
  // Only new bytes can complete a last line without "\n": one already judged is not read again.
  if (
    !more &&
    cursor.scanned > scannedBefore &&
    cursor.offset < cursor.scanned &&
    !cursor.openLine &&
    last !== undefined
  ) {
    const length = cursor.scanned - cursor.offset;
    if (length <= limits.maxLineBytes && lastNonBlank(last.bytes, cursor.offset - last.start) === 0x7d) {
      const bytes = await readRange(handle, cursor.offset, cursor.scanned);
      if (isWholeObject(bytes)) {
        cursor.line++;
        cursor.openLine = true;
        lines.push(bytes);
        cursor.offset = cursor.scanned;
      }
    }
  }
  return { lines, problems, cursor, more };
}

/**
 * One batch of the lines of the file at `path` after `from` up to byte `end`, for a reader that
 * catches up with another: `undefined` when the file is no longer the one with inode `ino`, or is
 * shorter than `end` (it was replaced or truncated: the other reader will tell).
 */
export async function readLineRange(
  path: string,
  ino: number,
  from: LineCursor,
  end: number,
  limits: ReadLimits,
): Promise<LinesRead | undefined> {
  let handle: FileHandle;
  try {
    handle = await openLogFile(path);
  } catch {
    return undefined;
  }
  try {
    const stats = await handle.stat();
    if (stats.ino !== ino || stats.size < end) return undefined;
    return await readLines(handle, from, end, limits);
  } finally {
    await handle.close();
  }
}

/** Reads are made in pieces of this size; a line is scanned for its end piece by piece. */
const chunkBytes = 256 * 1024;

async function takeLine(
  handle: FileHandle,
  cursor: LineCursor,
  lineEnd: number,
  chunk: { start: number; bytes: Buffer },
  limits: ReadLimits,
  lines: Buffer[],
  problems: LogProblem[],
): Promise<void> {
  const length = lineEnd - cursor.offset;
  if (cursor.openLine) {
    // What follows a last line that was a whole object, up to its "\n": nothing, as openSession writes it.
    cursor.openLine = false;
    if (length === 0) return;
    const text = (await lineBytes(handle, cursor.offset, lineEnd, chunk, Math.min(length, excerptBytes))).toString(
      "utf8",
    );
    if (text.trim() !== "" || length > excerptBytes)
      problems.push({ line: cursor.line, message: `text after the entry on the same line: ${excerpt(text)}` });
    return;
  }
  cursor.line++;
  if (length > limits.maxLineBytes) {
    problems.push({
      line: cursor.line,
      message: `a line of ${formatBytes(length)}, longer than the viewer reads (${formatBytes(limits.maxLineBytes)}): not shown`,
    });
    // In its place, a blank line (which is no entry): the lines after it keep their numbers.
    lines.push(Buffer.alloc(0));
    return;
  }
  lines.push(await lineBytes(handle, cursor.offset, lineEnd, chunk, length));
}

// The first `length` bytes of the line from `start` to `end`: from the chunk when it holds them.
function lineBytes(
  handle: FileHandle,
  start: number,
  end: number,
  chunk: { start: number; bytes: Buffer },
  length: number,
): Promise<Buffer> | Buffer {
  if (start >= chunk.start) return chunk.bytes.subarray(start - chunk.start, start - chunk.start + length);
  return readRange(handle, start, Math.min(end, start + length));
}

export async function readRange(handle: FileHandle, start: number, end: number): Promise<Buffer> {
  const buffer = Buffer.alloc(Math.max(0, end - start));
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, start + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === buffer.length ? buffer : buffer.subarray(0, filled);
}

// The last byte of `bytes` from index `from` on that is not JSON whitespace, or -1.
function lastNonBlank(bytes: Buffer, from: number): number {
  for (let index = bytes.length - 1; index >= Math.max(0, from); index--) {
    const byte = bytes[index]!;
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return byte;
  }
  return -1;
}

// A strict prefix of a JSON object never parses as one: its closing brace comes last.
function isWholeObject(bytes: Buffer): boolean {
  const text = bytes.toString("utf8").trim();
  if (!text.startsWith("{") || !text.endsWith("}")) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Problem texts quote at most this much of a line. */
export const excerptBytes = 200;

/**
 * `text` cut to `length` characters (80 by default) for a problem's message: what the viewer says
 * of a line costs little whatever the line holds. A character is never cut in half.
 */
export function excerpt(text: string, length = 80): string {
  if (text.length <= length) return text.replace(loneSurrogate, "\uFFFD");
  const end = /[\uD800-\uDBFF]/.test(text[length - 1]!) ? length - 1 : length;
  return `${text.slice(0, end).replace(loneSurrogate, "\uFFFD")}…`;
}

// Half a character (JSON.parse names a bad token by one UTF-16 unit) would not survive UTF-8.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${bytes} bytes`;
}
