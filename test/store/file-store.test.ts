import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { send } from "simple-agent-loop";
import { closeSession, fileStore, loadSession } from "simple-agent-loop/store";
import { tempDir } from "./helpers.ts";
import { sessionStoreSuite } from "simple-agent-loop/store/testing";

sessionStoreSuite("fileStore", () => fileStore(join(tempDir(), "sessions")));

describe("fileStore", () => {
  it("keeps id abc in <directory>/abc.jsonl, a session file like any other", async () => {
    const directory = join(tempDir(), "sessions");
    const store = fileStore(directory);
    expect(store.path("abc")).toBe(join(directory, "abc.jsonl"));
    const session = await store.open("abc");
    send(session, "hi");
    expect(existsSync(join(directory, "abc.jsonl.lock"))).toBe(true);
    expect((await store.list()).map((summary) => summary.id)).toStrictEqual(["abc"]); // not the lock
    await closeSession(session);
    expect(await loadSession(join(directory, "abc.jsonl"))).toStrictEqual(session);
  });

  it("refuses ids that could name a file outside its directory, or a hidden one", async () => {
    const store = fileStore(join(tempDir(), "sessions"));
    for (const id of [
      "",
      ".",
      "..",
      "../escape",
      "a/b",
      "a\\b",
      "/etc/passwd",
      ".hidden",
      "a\0b",
      "x".repeat(129),
      "space d",
    ]) {
      expect(() => store.path(id), JSON.stringify(id)).toThrow(
        expect.objectContaining({ name: "StoreError", code: "invalid-argument" }),
      );
      await expect(store.open(id), JSON.stringify(id)).rejects.toMatchObject({ code: "invalid-argument" });
      await expect(store.load(id), JSON.stringify(id)).rejects.toMatchObject({ code: "invalid-argument" });
    }
    expect(() => store.path("../escape")).toThrow(
      'invalid session id "../escape": use 1 to 128 letters, digits, ".", "_" or "-", not starting with "."',
    );
    for (const id of ["a", "run-2025.01.01_3", "A_b-c.d", "x".repeat(128)]) expect(store.path(id)).toMatch(/\.jsonl$/);
  });

  it("lists only the session files of its directory", async () => {
    const directory = join(tempDir(), "sessions");
    const store = fileStore(directory);
    await closeSession(await store.open("kept"));
    writeFileSync(join(directory, "notes.txt"), "");
    writeFileSync(join(directory, ".hidden.jsonl"), "");
    expect((await store.list()).map((summary) => summary.id)).toStrictEqual(["kept"]);
  });
});
