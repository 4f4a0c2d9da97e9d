import type { Stats } from "node:fs";
import { serialQueue, type SerialQueue } from "../serial-queue.ts";

/**
 * What the file tools of one CLI run share: the workspace root (a real path), what the model has
 * seen of each file, and the one queue every write goes through.
 */
export type Workspace = {
  /** The workspace directory, symbolic links resolved; tools refuse paths outside it. */
  root: string;
  /** The state of each file as the model last saw it, by real path: `edit` needs a current one. */
  seen: FileVersions;
  /** `write` and `edit` run through it one at a time, even when the model calls several at once. */
  writes: SerialQueue;
  /**
   * Told of each change `write` and `edit` are about to make, before the file is touched (a
   * checkpoint to rewind to must be kept before what it undoes happens). Throwing stops the change.
   */
  onFileChange?: (change: FileChange) => void;
};

/**
 * A change a file tool makes: call `callId` sets `path` (relative to the workspace) to `content`;
 * `previous` is what the file held: nothing (`absent`: the tool creates it), its bytes, or only its
 * size when it is larger than the tools keep (`too-large`); `mode`, its permission bits. `directories`: the parent directories
 * the tool created for it (they were missing), relative to the workspace, outermost first.
 */
export type FileChange = {
  callId: string;
  path: string;
  previous:
    { type: "absent" } | { type: "content"; bytes: Uint8Array; mode?: number } | { type: "too-large"; size: number };
  content: Uint8Array;
  directories?: string[];
};

/** The version of each file the model has seen (read, or written itself), by absolute real path. */
export type FileVersions = {
  record: (path: string, stats: Stats) => void;
  /** `unread`: never seen in this run; `changed`: modified on disk since it was seen; else `current`. */
  check: (path: string, stats: Stats) => "unread" | "changed" | "current";
};

export function createWorkspace(
  root: string,
  options: { onFileChange?: (change: FileChange) => void } = {},
): Workspace {
  const workspace: Workspace = { root, seen: fileVersions(), writes: serialQueue() };
  if (options.onFileChange !== undefined) workspace.onFileChange = options.onFileChange;
  return workspace;
}

function fileVersions(): FileVersions {
  const versions = new Map<string, string>();
  const versionOf = (stats: Stats): string => `${stats.mtimeMs}:${stats.size}`;
  return {
    record: (path, stats) => void versions.set(path, versionOf(stats)),
    check: (path, stats) => {
      const seen = versions.get(path);
      if (seen === undefined) return "unread";
      return seen === versionOf(stats) ? "current" : "changed";
    },
  };
}
