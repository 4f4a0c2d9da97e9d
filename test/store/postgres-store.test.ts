import { afterAll, describe, expect, it } from "vitest";
import pg from "pg";
import { send } from "simple-agent-loop";
import { closeSession, postgresStore, type PostgresStore, type SessionStore } from "simple-agent-loop/store";
import { sessionStoreSuite } from "simple-agent-loop/store/testing";
import { startTestPostgres } from "./postgres-server.ts";

const server = await startTestPostgres();
if ("unavailable" in server) {
  console.warn(`\n*** postgresStore tests SKIPPED: ${server.unavailable} ***\n`);
  describe.skip(`postgresStore (skipped: ${server.unavailable})`, () => {
    it("needs a PostgreSQL server", () => undefined);
  });
} else {
  afterAll(() => server.stop());
  const urls = new WeakMap<SessionStore, string>();
  sessionStoreSuite(
    "postgresStore",
    async () => {
      const connectionString = await server.freshSchema();
      const store = postgresStore({ connectionString });
      urls.set(store, connectionString);
      return store;
    },
    {
      // What a writer killed mid-run leaves: its lease row, past its expiry.
      expireLease: async (store, id) => {
        const client = new pg.Client({ connectionString: urls.get(store)! });
        await client.connect();
        try {
          await client.query("UPDATE sessions SET lease_expires = 1 WHERE id = $1", [id]);
        } finally {
          await client.end();
        }
      },
      dispose: (store) => (store as PostgresStore).close(),
    },
  );

  describe("postgresStore", () => {
    it("creates the documented tables with migrate(), and works on a pool of the caller's", async () => {
      const connectionString = await server.freshSchema();
      const pool = new pg.Pool({ connectionString });
      try {
        const store = postgresStore({ pool });
        await store.migrate();
        await store.migrate();
        const { rows } = await pool.query(
          "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name",
        );
        expect(rows.map((row) => row.table_name)).toStrictEqual(["blobs", "entries", "sessions", "stop_requests"]);
        const session = await store.open("pooled");
        send(session, "hello");
        await closeSession(session);
        const stored = await pool.query("SELECT seq, entry FROM entries WHERE session_id = 'pooled'");
        expect(stored.rows.map((row) => [Number(row.seq), JSON.parse(row.entry).message.content])).toStrictEqual([
          [1, "hello"],
        ]);
        await store.close(); // the pool is the caller's: still usable
        await pool.query("SELECT 1");
      } finally {
        await pool.end();
      }
    });
  });
}
