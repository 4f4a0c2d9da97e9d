import { extendSession, type Session } from "../session.ts";
import { appendEntry, closeSession, flushSession } from "../store/binding.ts";
import type { SessionEntry } from "../store/entries.ts";
import type { SessionStore } from "../store/session-store.ts";
import { StoreError } from "../store/store-error.ts";
import { sessionFromEntries } from "./session-state.ts";

/**
 * Writes a durable session (its `export`: the file store's JSONL log) into any `SessionStore`
 * (file, SQLite, PostgreSQL, your own) under `id`, as a new session: `store.load(id)` then equals
 * the agent object's `session`, and its custom entries (a workspace, an application's own) are
 * kept. Throws an `invalid-argument` StoreError when `id` already holds messages there (nothing is
 * written), and the store's own errors (a `SessionLockedError` while a writer holds `id`).
 */
export async function writeExportToStore(jsonl: string, store: SessionStore, id: string): Promise<Session> {
  const entries = parseLog(jsonl, `session "${id}"'s export`);
  const exported = sessionFromEntries(entries, `restate:${id}`);
  const target = await store.open(id);
  try {
    if (target.messages.length > 0)
      throw new StoreError(`exportTo: session "${id}" already holds ${target.messages.length} messages in the store`, {
        code: "invalid-argument",
      });
    for (const message of exported.messages) extendSession(target, structuredClone(message));
    for (const entry of entries) if (entry.type === "custom") appendEntry(target, entry.customType, entry.data);
    await flushSession(target);
  } finally {
    await closeSession(target);
  }
  return exported;
}

/** The entries of a JSON Lines log; a line that is not JSON is a `malformed` StoreError naming `label` and the line. */
export function parseLog(jsonl: string, label: string): SessionEntry[] {
  const entries: SessionEntry[] = [];
  for (const [index, line] of jsonl.split("\n").entries()) {
    if (line.trim() === "") continue;
    try {
      entries.push(JSON.parse(line) as SessionEntry);
    } catch (error) {
      throw new StoreError(`line ${index + 1} of ${label} is not JSON`, { code: "malformed", cause: error });
    }
  }
  return entries;
}
