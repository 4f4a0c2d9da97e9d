import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { filePart, imagePart, send, type Session } from "simple-agent-loop";
import {
  appendEntry,
  closeSession,
  loadSession,
  postgresStore,
  sqliteStore,
  type SessionStore,
} from "simple-agent-loop/store";
import { isStoreLocation, storeSessionFile } from "../../src/cli/store-session-file.ts";
import { tempDir } from "../store/helpers.ts";
import { startTestPostgres } from "../store/postgres-server.ts";
import { address, withViewer } from "../viewer/helpers.ts";

const postgres = await startTestPostgres();
if ("unavailable" in postgres)
  console.warn(`\n*** view of a PostgreSQL session SKIPPED: ${postgres.unavailable} ***\n`);
else afterAll(() => postgres.stop());

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

// A real 1×1 PNG, and a PDF.
const png = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const pdf = Buffer.from("%PDF-1.4\n%%EOF\n");
const hashOf = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

type DatabaseCase = {
  store: () => Promise<SessionStore & { close: () => unknown }>;
  location: (id: string) => Promise<string>;
};
const databases: [string, DatabaseCase][] = [];
{
  const directory = tempDir();
  databases.push([
    "SQLite",
    {
      store: () => Promise.resolve(sqliteStore(join(directory, "sessions.db"))),
      location: (id) => Promise.resolve(`sqlite:${join(directory, "sessions.db")}/${id}`),
    },
  ]);
}
if (!("unavailable" in postgres)) {
  const schema = postgres.freshSchema();
  databases.push([
    "PostgreSQL",
    {
      store: async () => postgresStore({ connectionString: await schema }),
      location: async (id) => {
        const url = new URL(await schema);
        url.pathname = `${url.pathname}/${id}`;
        return url.toString();
      },
    },
  ]);
}

describe.each(databases)("view of a %s session with images and files", (_name, database) => {
  it("serves its parts from /api/blob as a file-store session's, the copy holding references, and follows new ones", async () => {
    const store = await database.store();
    let session: Session | undefined;
    try {
      session = await store.open("shots");
      send(session, [
        { type: "text", text: "look" },
        imagePart(png, "image/png"),
        filePart(pdf, "application/pdf", "r.pdf"),
      ]);
      await closeSession(session);
      session = await store.open("shots");
      const mirror = await storeSessionFile(await database.location("shots"), "/", 20);
      try {
        const copy = readFileSync(mirror.path, "utf8");
        expect(copy).toContain(hashOf(png));
        expect(copy).not.toContain(png.toString("base64"));
        // The copy loads as the session the store holds, bytes and all.
        expect((await loadSession(mirror.path)).messages).toStrictEqual((await store.load("shots")).messages);
        await withViewer(mirror.path, async (viewer) => {
          const image = await fetch(address(viewer, `api/blob?file=shots.jsonl&hash=${hashOf(png)}`));
          expect(image.status).toBe(200);
          expect(image.headers.get("content-type")).toBe("image/png");
          expect(Buffer.from(await image.arrayBuffer())).toStrictEqual(png);
          const document = await fetch(address(viewer, `api/blob?file=shots.jsonl&hash=${hashOf(pdf)}`));
          expect(document.headers.get("content-type")).toBe("application/octet-stream");
          expect(Buffer.from(await document.arrayBuffer())).toStrictEqual(pdf);
          // An image the store records later is followed, and served too.
          const later = Buffer.concat([png, Buffer.from([0])]);
          send(session!, [imagePart(later, "image/png")]);
          await closeSession(session!);
          session = undefined;
          const url = address(viewer, `api/blob?file=shots.jsonl&hash=${hashOf(later)}`);
          while ((await fetch(url, { method: "HEAD" })).status !== 200)
            await new Promise((done) => setTimeout(done, 20));
          expect(Buffer.from(await (await fetch(url)).arrayBuffer())).toStrictEqual(later);
        });
      } finally {
        await mirror.close();
      }
    } finally {
      if (session !== undefined) await closeSession(session);
      await store.close();
    }
  });
});
