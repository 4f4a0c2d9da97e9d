import { closeSync, fsyncSync, writeSync } from "node:fs";
import { errorMessage } from "../errors.ts";
import type { Message } from "../session.ts";
import { turnBefore, unansweredCalls } from "../session-turns.ts";
import type { EntrySink } from "./binding.ts";
import { entryToBlobs, type BlobStore } from "./blobs.ts";
import type { SessionEntry } from "./entries.ts";
import { StoreError } from "./store-error.ts";

/**
 * When appended entries are forced to the disk (fsync). Every entry is written to the file (into
 * the OS) before the change that made it returns, whatever the mode: a killed process loses
 * nothing; the mode is about power cuts and OS crashes.
 *
 * - `"turn"` (default): at turn boundaries, where no tool call waits for its result: after the
 *   result that completes a turn's tool calls, after a user or system message (it ends the turn
 *   before it: calls left open there are never answered), after an assistant message with no
 *   call left open, after every approval update (a pause or a decision), and on close. Between
 *   them sit the model's thinking and tool calls, results of a batch still running and
 *   compaction's replacements: a power cut there loses at most the turn in progress, which the
 *   loop redoes on resume.
 * - `"every-entry"`: after each write (an entry, or a model turn written whole).
 * - `"off"`: never; the OS writes back when it likes.
 */
export type SyncMode = "turn" | "every-entry" | "off";

/**
 * An append-only writer for a session log open at `fd` (opened with "a"), as an EntrySink. Each
 * entry is one line, written whole with `writeSync` before `append` returns (a batch from
 * `appendAll`, one write). After a failed write
 * it refuses every later one (a `write-failed` StoreError), so a partial line can only be last.
 */
export function createLogWriter(
  fd: number,
  options: {
    path: string;
    sync: SyncMode;
    /** The messages already in the log, to know which tool calls are open. */
    messages: readonly Message[];
    /** The file does not end with "\n" (a last line written by hand): start the next line first. */
    startWithNewline: boolean;
    /** Where content parts' data goes before a line refers to it (written, and synced as the line would be, first). */
    blobs: Pick<BlobStore, "write">;
    /** Called once the file is closed: releases the lock. */
    onClose: () => void;
  },
): EntrySink {
  const { path, sync } = options;
  const openCalls = openToolCalls(options.messages);
  let pending = options.startWithNewline ? "\n" : "";
  let unsynced = false;
  let failure: unknown;
  let closed = false;

  const appendAll = (entries: SessionEntry[]): void => {
    if (closed) throw new StoreError(`${path}: the session log is closed`, { code: "not-open", path });
    if (failure !== undefined) {
      throw new StoreError(`${path}: an earlier write failed, so this session is no longer recorded`, {
        code: "write-failed",
        path,
        cause: failure,
      });
    }
    // Serialized first: a value JSON cannot hold throws here, before anything is written. The
    // blobs a line refers to are written before it, so no line ever refers to a missing blob.
    let lines = pending;
    for (const entry of entries) lines += `${JSON.stringify(entryToBlobs(entry, options.blobs))}\n`;
    let boundary = false;
    for (const entry of entries) boundary = isTurnBoundary(entry, openCalls);
    try {
      // One write for the batch: a killed process leaves all of it or none.
      writeAll(fd, Buffer.from(lines));
      pending = "";
      if (sync === "every-entry" || (sync === "turn" && boundary)) {
        fsyncSync(fd);
        unsynced = false;
      } else unsynced = sync !== "off";
    } catch (error) {
      failure = error;
      throw new StoreError(`${path}: could not append to the session log: ${errorMessage(error)}`, {
        code: "write-failed",
        path,
        cause: error,
      });
    }
  };
  const append = (entry: SessionEntry): void => appendAll([entry]);

  const close = (): void => {
    if (closed) return;
    closed = true;
    try {
      if (unsynced && failure === undefined) fsyncSync(fd);
    } finally {
      try {
        closeSync(fd);
      } finally {
        options.onClose();
      }
    }
  };

  return { append, appendAll, close };
}

function writeAll(fd: number, bytes: Buffer): void {
  for (let written = 0; written < bytes.length;) written += writeSync(fd, bytes, written);
}

// Keeps `openCalls` up to date and says whether the log reaches a turn boundary with `entry`.
function isTurnBoundary(entry: SessionEntry, openCalls: Set<string>): boolean {
  if (entry.type === "update") return true;
  if (entry.type !== "message") return false;
  const { message } = entry;
  if ("role" in message) {
    if (message.role !== "assistant") openCalls.clear();
    return openCalls.size === 0;
  }
  if (message.type === "tool_call") openCalls.add(message.id);
  else if (message.type === "tool_result") return openCalls.delete(message.id) && openCalls.size === 0;
  return false;
}

// Only the last turn's calls can still be answered.
function openToolCalls(messages: readonly Message[]): Set<string> {
  const turn = turnBefore(messages, messages.length);
  return new Set(turn === undefined ? [] : unansweredCalls(messages, turn).map((call) => call.id));
}
