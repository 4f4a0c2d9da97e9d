import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { send } from "simple-agent-loop";
import { appendEntry, closeSession, sqliteStore } from "simple-agent-loop/store";
import { isStoreLocation, storeSessionFile } from "../../src/cli/store-session-file.ts";
import { tempDir } from "../store/helpers.ts";

// `simple-agent-loop view sqlite:<file>/<id>` (or postgres://…/<database>/<id>) serves a private
// JSONL copy of the session that follows the store, so the viewer reads it as any session file.
describe("view of a database store's session", () => {
  it("names database locations apart from files", () => {
    expect(isStoreLocation("postgres://u:p@127.0.0.1:5432/app/run-1")).toBe(true);
    expect(isStoreLocation("postgresql://127.0.0.1/app/run-1")).toBe(true);
    expect(isStoreLocation("sqlite:data/sessions.db/run-1")).toBe(true);
    expect(isStoreLocation("sessions/run-1.jsonl")).toBe(false);
  });

  it("copies the entries as the file store writes them, then follows what the store records", async () => {
    const directory = tempDir();
    const store = sqliteStore(join(directory, "sessions.db"));
    const session = await store.open("run-1");
    send(session, "hello");
    appendEntry(session, "note", { n: 1 });
    const mirror = await storeSessionFile("sqlite:sessions.db/run-1", directory, 20);
    try {
      const read = (): unknown[] =>
        readFileSync(mirror.path, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line) as unknown);
      expect(mirror.path).toMatch(/run-1\.jsonl$/);
      expect(read()).toStrictEqual(await store.loadEntries("run-1"));
      send(session, "more");
      await closeSession(session);
      while (read().length < 3) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(read()).toStrictEqual(await store.loadEntries("run-1"));
    } finally {
      await mirror.close();
      store.close();
    }
  });

  it("says what is wrong with a location it cannot read, credentials left out", async () => {
    const directory = tempDir();
    await expect(storeSessionFile("sqlite:sessions.db", directory)).rejects.toThrow(
      "sqlite:sessions.db: name a session as sqlite:<database file>/<session id>",
    );
    await expect(storeSessionFile("sqlite:sessions.db/missing", directory)).rejects.toThrow(/no session there/);
    await expect(storeSessionFile("postgres://user:secret@127.0.0.1:1/only-id", directory)).rejects.toThrow(
      "postgres://…@127.0.0.1:1/only-id: name a session as postgres://…/<database>/<session id>",
    );
  });
});
