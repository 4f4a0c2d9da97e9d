import type { ObjectContext, ObjectSharedContext } from "@restatedev/restate-sdk";
import { onSessionChange, type Session } from "../session.ts";
import { fromBase64, toBase64 } from "../content-parts.ts";
import { blobHash, entryFromBlobs, entryToBlobs, isBlobHash } from "../store/blobs.ts";
import { entryFor, replayEntries, restoreKeptOutputs, type SessionEntry } from "../store/entries.ts";
import type { ReplayClock } from "./replay-clock.ts";

// The session lives in the object's state as the file store's log: one key per entry
// (`entry:0`, `entry:1`, …) and their count, so each change writes only what is new, and the
// export is the very JSONL a file store would have written. As in the file store, the base64 of
// content parts (and the outputs kept for `recall_output`) is stored once per content as a blob the
// entry refers to (`"blob": "<sha256>"`): `blob:<sha256>` holds its number of chunks and
// `blob:<sha256>:<n>` each chunk, at most `maxStepBytes`, so no state write outgrows a step.
const countKey = "entryCount";
const entryKey = (index: number): string => `entry:${index}`;
const blobKey = (hash: string): string => `blob:${hash}`;
const chunkKey = (hash: string, index: number): string => `blob:${hash}:${index}`;

/**
 * The session's log entries from the object's state, in order, or `undefined` when the object
 * has none (no run ever started under this key).
 */
export async function readEntries(ctx: ObjectContext | ObjectSharedContext): Promise<SessionEntry[] | undefined> {
  const count = await ctx.get<number>(countKey);
  if (count === null) return undefined;
  const stored: SessionEntry[] = [];
  for (let index = 0; index < count; index++) {
    const entry = await ctx.get<SessionEntry>(entryKey(index));
    if (entry !== null) stored.push(entry);
  }
  // The blobs first (state reads are asynchronous), then each entry with its blobs put back.
  const blobs = new Map<string, Uint8Array>();
  for (const hash of blobReferences(stored)) {
    if (blobs.has(hash)) continue;
    const chunks = (await ctx.get<number>(blobKey(hash))) ?? 0;
    let data = "";
    for (let index = 0; index < chunks; index++) data += (await ctx.get<string>(chunkKey(hash, index))) ?? "";
    blobs.set(hash, fromBase64(data));
  }
  const read = (hash: string): Uint8Array => {
    const bytes = blobs.get(hash);
    if (bytes === undefined) throw new Error(`the object's state has no blob ${hash}`);
    return bytes;
  };
  return stored.map((entry) => entryFromBlobs(entry, { read }));
}

// Every `"blob": "<sha256>"` in the entries, wherever it is (parts, kept outputs).
function blobReferences(entries: readonly SessionEntry[]): Set<string> {
  const found = new Set<string>();
  const visit = (value: unknown): void => {
    if (typeof value !== "object" || value === null) return;
    if (Array.isArray(value)) return value.forEach(visit);
    for (const [key, inner] of Object.entries(value)) {
      if (key === "blob" && isBlobHash(inner)) found.add(inner);
      else visit(inner);
    }
  };
  entries.forEach(visit);
  return found;
}

/** Whether the object has a session, read without loading its entries. */
export async function hasSession(ctx: ObjectContext | ObjectSharedContext): Promise<boolean> {
  return (await ctx.get<number>(countKey)) !== null;
}

/** The session the entries describe (throws for a log that cannot be applied, naming the entry). */
export function sessionFromEntries(entries: readonly SessionEntry[], label: string): Session {
  const { session, kept } = replayEntries(
    entries.map((value, index) => ({ value, line: index + 1 })),
    label,
  );
  // The outputs cleared or offloaded from the session live in the object's state too, as entries.
  restoreKeptOutputs(session, kept);
  return session;
}

/** The entries as JSON Lines, byte for byte what the file store writes for them. */
export function entriesToJsonl(entries: readonly SessionEntry[]): string {
  let text = "";
  for (const entry of entries) text += `${JSON.stringify(entry)}\n`;
  return text;
}

/**
 * Writes a whole log into an object's state that has none (`import`): each entry, its content
 * parts' data and kept outputs as blobs in chunks of at most `maxStepBytes`, then the count.
 */
export function writeEntries(ctx: ObjectContext, entries: readonly SessionEntry[], maxStepBytes: number): void {
  const blobs = { write: (bytes: Uint8Array): string => writeBlob(ctx, bytes, maxStepBytes) };
  entries.forEach((entry, index) => ctx.set(entryKey(index), entryToBlobs(entry, blobs)));
  ctx.set(countKey, entries.length);
}

/** Records a session's changes into the object's state; see `recordSession`. */
export type SessionRecorder = {
  /** Writes the changes recorded since the last flush to the state. */
  flush: () => void;
  /** Makes the next message that enters (the model's turn, entering whole) flush everything. */
  flushAfterNextAppend: () => void;
  /** Stops listening (what was recorded and not flushed stays pending for `flush`). */
  stop: () => void;
};

/**
 * Listens to `session` and turns each change into its log entry, stamped by `clock` (so the
 * entries are the same on every replay), and kept until `flush` writes them. Writes happen only at
 * `flush`, at points that come in the same order on every replay: when a model turn has entered,
 * before a model step, when the run pauses or ends. State writes are journaled and compared on
 * replay, and a write between two parallel tool steps would land wherever their completion order
 * put it, so tool results wait for the next model step.
 * `count`: entries already in the state; `maxStepBytes`: the most a blob's chunk may hold.
 */
export function recordSession(
  ctx: ObjectContext,
  session: Session,
  clock: ReplayClock,
  count: number,
  maxStepBytes: number,
): SessionRecorder {
  const pending: SessionEntry[] = [];
  let written = count;
  let flushOnAppend = false;
  const blobs = { write: (bytes: Uint8Array): string => writeBlob(ctx, bytes, maxStepBytes) };
  const flush = (): void => {
    if (pending.length === 0) return;
    for (const entry of pending.splice(0)) ctx.set(entryKey(written++), entryToBlobs(entry, blobs));
    ctx.set(countKey, written);
  };
  const stop = onSessionChange(session, (change) => {
    if (change.type === "append") clock.stamp(change.message);
    // A decision made inside the loop (a rule, a classifier, a hook) carries the wall time it was made at.
    else if (change.type === "update" && change.reason === "approval") clock.stampApproval(change.message);
    // A copy now: a message can change in place later (approval marks), the entry must not.
    const entry = structuredClone(entryFor(change));
    if ("ts" in entry) entry.ts = clock.now();
    // A wait measured by the clock of this attempt would differ on a replay, and state writes
    // must replay the same: a durable session records no `waitMs`.
    if (entry.type === "message" && "type" in entry.message && entry.message.type === "tool_result")
      delete entry.message.waitMs;
    pending.push(entry);
    // A model turn enters whole (`more` until its last message): write it once it is all in.
    if (flushOnAppend && change.type === "append" && change.more !== true) {
      flushOnAppend = false;
      flush();
    }
  });
  return {
    flush,
    flushAfterNextAppend: () => void (flushOnAppend = true),
    stop,
  };
}

// A blob's base64 in chunks a step can hold (the JSON string of a chunk: the chunk and its quotes).
function writeBlob(ctx: ObjectContext, bytes: Uint8Array, maxStepBytes: number): string {
  const hash = blobHash(bytes);
  const data = toBase64(bytes);
  const size = Math.max(1, maxStepBytes - 64);
  const chunks = Math.max(1, Math.ceil(data.length / size));
  for (let index = 0; index < chunks; index++)
    ctx.set(chunkKey(hash, index), data.slice(index * size, (index + 1) * size));
  ctx.set(blobKey(hash), chunks);
  return hash;
}
