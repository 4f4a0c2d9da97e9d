import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it, vi } from "vitest";
import { send } from "simple-agent-loop";
import { closeSession, postgresStore, sqliteStore, type SqliteStore, type SessionStore } from "simple-agent-loop/store";
import { sessionStoreSuite } from "simple-agent-loop/store/testing";
import { tempDir } from "./helpers.ts";

sessionStoreSuite("sqliteStore", () => sqliteStore(join(tempDir(), "sessions.db")), {
  expireLease: async (store, id) => expireLease(store, id),
  dispose: (store) => (store as SqliteStore).close(),
});

// What a writer killed mid-run leaves: its lease row, past its expiry.
function expireLease(store: SessionStore, id: string): void {
  const database = new DatabaseSync((store as SqliteStore).path);
  try {
    database.prepare("UPDATE sessions SET lease_expires = 1 WHERE id = ?").run(id);
  } finally {
    database.close();
  }
}

describe("sqliteStore", () => {
  it("keeps WAL mode and the documented tables; part data once per store, by its SHA-256", async () => {
    const store = sqliteStore(join(tempDir(), "nested", "sessions.db"));
    const data = Buffer.from("a picture, say").toString("base64");
    for (const id of ["one", "two"]) {
      const session = await store.open(id);
      send(session, "look");
      send(session, "and again");
      send(session, "and once more");
      await closeSession(session);
    }
    const part = { type: "image", mediaType: "image/png", data };
    const session = await store.open("three");
    send(session, "look");
    const { extendSession } = await import("simple-agent-loop");
    extendSession(session, { type: "tool_call", id: "c", name: "shot", input: {} });
    extendSession(session, { type: "tool_result", id: "c", output: "", content: [part, part] } as never);
    await closeSession(session);
    store.close();

    const database = new DatabaseSync(store.path);
    try {
      expect({ ...database.prepare("PRAGMA journal_mode").get() }).toStrictEqual({ journal_mode: "wal" });
      const tables = database.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
      expect(tables.map((row) => row.name)).toStrictEqual(["blobs", "entries", "sessions", "stop_requests"]);
      expect({ ...database.prepare("SELECT count(*) AS n FROM blobs").get() }).toStrictEqual({ n: 1 });
      const stored = database.prepare("SELECT entry FROM entries WHERE session_id = 'three' AND seq = 3").get();
      expect(String(stored?.entry)).not.toContain(data);
      const seqs = database.prepare("SELECT seq FROM entries WHERE session_id = 'one' ORDER BY seq").all();
      expect(seqs.map((row) => row.seq)).toStrictEqual([1, 2, 3]);
      expect({
        ...database.prepare("SELECT last_seq, lease_owner FROM sessions WHERE id = 'one'").get(),
      }).toStrictEqual({
        last_seq: 3,
        lease_owner: null,
      });
    } finally {
      database.close();
    }
    expect(await sqliteStore(store.path).load("three")).toStrictEqual(session);
  });

  it("checks its options where they enter, naming the one that is wrong", () => {
    const path = join(tempDir(), "x.db");
    expect(() => sqliteStore(path, { leaseMs: 10 })).toThrow(
      "sqliteStore: leaseMs must be an integer of at least 100 (ms); got 10",
    );
    expect(() => sqliteStore(path, { busyTimeoutMs: -1 })).toThrow(
      expect.objectContaining({ code: "invalid-argument" }),
    );
    expect(() => sqliteStore(path, { owner: "" })).toThrow("sqliteStore: owner must be a non-empty string");
    expect(() => postgresStore({} as never)).toThrow("postgresStore: give either connectionString or pool");
  });

  it("says which Node.js it needs where node:sqlite is missing", async () => {
    const spy = vi.spyOn(process, "getBuiltinModule").mockReturnValue(undefined);
    try {
      await expect(sqliteStore(join(tempDir(), "x.db")).open("a")).rejects.toThrow(
        `sqliteStore needs Node.js 22.13 or later (its built-in node:sqlite module); this is Node.js ${process.version}. Use fileStore or postgresStore here, or a newer Node.js.`,
      );
    } finally {
      spy.mockRestore();
    }
  });
});
