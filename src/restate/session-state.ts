import type { ObjectContext, ObjectSharedContext } from "@restatedev/restate-sdk";
import { onSessionChange, type Session } from "../session.ts";
import { entryFor, replayEntries, restoreKeptOutputs, type SessionEntry } from "../store/entries.ts";
import type { ReplayClock } from "./replay-clock.ts";

// The session lives in the object's state as the file store's log: one key per entry
// (`entry:0`, `entry:1`, …) and their count, so each change writes only what is new, and the
// export is the very JSONL a file store would have written.
const countKey = "entryCount";
const entryKey = (index: number): string => `entry:${index}`;

/**
 * The session's log entries from the object's state, in order, or `undefined` when the object
 * has none (no run ever started under this key).
 */
export async function readEntries(ctx: ObjectContext | ObjectSharedContext): Promise<SessionEntry[] | undefined> {
  const count = await ctx.get<number>(countKey);
  if (count === null) return undefined;
  const entries: SessionEntry[] = [];
  for (let index = 0; index < count; index++) {
    const entry = await ctx.get<SessionEntry>(entryKey(index));
    if (entry !== null) entries.push(entry);
  }
  return entries;
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
 * `count`: entries already in the state.
 */
export function recordSession(
  ctx: ObjectContext,
  session: Session,
  clock: ReplayClock,
  count: number,
): SessionRecorder {
  const pending: SessionEntry[] = [];
  let written = count;
  let flushOnAppend = false;
  const flush = (): void => {
    if (pending.length === 0) return;
    for (const entry of pending.splice(0)) ctx.set(entryKey(written++), entry);
    ctx.set(countKey, written);
  };
  const stop = onSessionChange(session, (change) => {
    if (change.type === "append") clock.stamp(change.message);
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
