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
  const entries = parseExport(jsonl, id);
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

function parseExport(jsonl: string, id: string): SessionEntry[] {
  const entries: SessionEntry[] = [];
  for (const [index, line] of jsonl.split("\n").entries()) {
    if (line.trim() === "") continue;
    try {
      entries.push(JSON.parse(line) as SessionEntry);
    } catch (error) {
      throw new StoreError(`exportTo: line ${index + 1} of session "${id}"'s export is not JSON`, {
        code: "malformed",
        cause: error,
      });
    }
  }
  return entries;
}
