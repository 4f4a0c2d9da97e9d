import { mkdir, readdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { loadSession, openSession, type OpenSessionOptions } from "./session-file.ts";
import type { SessionStore } from "./session-store.ts";
import { checkStoreOptions } from "./store-options.ts";
import { StoreError } from "./store-error.ts";

/** A `SessionStore` whose sessions are JSONL logs in one directory; `path(id)` is where one lives. */
export type FileStore = SessionStore & { path: (id: string) => string };

/**
 * Sessions as files in `directory`: id `abc` is `<directory>/abc.jsonl` (see `openSession`). The
 * directory is created on the first `open`, owner-only. Ids are 1 to 128 letters, digits, `.`,
 * `_` and `-`, not starting with `.`, so an id can never name a file outside the directory;
 * anything else throws an `invalid-argument` StoreError.
 */
export function fileStore(directory: string, options: OpenSessionOptions = {}): FileStore {
  checkStoreOptions("fileStore", options);
  const root = resolve(directory);
  const path = (id: string): string => join(root, `${checkId(id)}.jsonl`);
  return {
    path,
    open: async (id) => {
      const file = path(id);
      await mkdir(root, { recursive: true, mode: 0o700 });
      return openSession(file, options);
    },
    load: async (id) => loadSession(path(id), options),
    list: async () => {
      let names: string[];
      try {
        names = await readdir(root);
      } catch (error) {
        if ((error as { code?: unknown }).code === "ENOENT") return [];
        throw error;
      }
      return names
        .filter((name) => name.endsWith(".jsonl"))
        .map((name) => name.slice(0, -".jsonl".length))
        .filter((id) => idPattern.test(id))
        .sort();
    },
  };
}

const idPattern = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

function checkId(id: string): string {
  if (typeof id === "string" && idPattern.test(id)) return id;
  throw new StoreError(
    `invalid session id ${JSON.stringify(id)}: use 1 to 128 letters, digits, ".", "_" or "-", not starting with "."`,
    { code: "invalid-argument" },
  );
}
