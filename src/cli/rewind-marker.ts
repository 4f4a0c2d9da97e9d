import { createHash } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { isSessionId } from "./sessions.ts";

/**
 * Marks a rewind as running in a workspace, so a later start of the CLI there finds one a crash
 * cut short without reading every session: `set` before the rewind records its intent, `clear`
 * once it recorded its end. The session log stays what says what to do; the mark only says which
 * session to look in.
 */
export type RewindMarker = { set: () => void; clear: () => void };

/**
 * The mark of `workspace` in the CLI's home: `<home>/rewinds/<hash of the workspace path>`, holding
 * the id of the session being rewound (mode 0600, its directory 0700), forced to the disk before
 * the rewind changes anything. `clear` never throws; `set` throws when it cannot write the mark,
 * and the rewind then does not start.
 */
export function rewindMarker(home: string, workspace: string, sessionId: string): RewindMarker {
  const { directory, path } = markerPath(home, workspace);
  return {
    set: () => {
      mkdirSync(directory, { recursive: true, mode: 0o700 });
      const descriptor = openSync(path, "w", 0o600);
      try {
        writeSync(descriptor, JSON.stringify({ session: sessionId }));
        fsyncSync(descriptor);
      } finally {
        closeSync(descriptor);
      }
    },
    clear: () => {
      try {
        rmSync(path, { force: true });
      } catch {
        // A mark left behind costs a look into a session whose rewinds are all finished.
      }
    },
  };
}

/** The id of the session a rewind in `workspace` was running in when it was cut short, or undefined. */
export function markedRewind(home: string, workspace: string): string | undefined {
  try {
    const { session } = JSON.parse(readFileSync(markerPath(home, workspace).path, "utf8")) as { session?: unknown };
    return typeof session === "string" && isSessionId(session) ? session : undefined;
  } catch {
    return undefined;
  }
}

function markerPath(home: string, workspace: string): { directory: string; path: string } {
  const directory = join(home, "rewinds");
  return { directory, path: join(directory, createHash("sha256").update(workspace).digest("hex").slice(0, 32)) };
}
