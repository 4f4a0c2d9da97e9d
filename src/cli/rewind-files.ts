import { normalize } from "node:path";
import { blobHash, type BlobStore } from "../store/blobs.ts";
import {
  openInWorkspace,
  readAt,
  removeEmptyDirectoryInWorkspace,
  removeInWorkspace,
  replaceInWorkspace,
} from "./tools/workspace-file.ts";
import { resolveInWorkspace } from "./tools/workspace-path.ts";

/** What a file of the workspace holds: nothing, content (by its SHA-256), or something a rewind cannot read. */
export type FileState = { type: "absent" } | { type: "content"; hash: string } | { type: "unreadable"; reason: string };

/**
 * What a rewind puts back at a path: content (a blob of the session; `mode`, the permission bits
 * for a file that is gone and made again) or nothing (the file is removed).
 */
export type FileTarget = { type: "blob"; blob: string; mode?: number } | { type: "absent" };

/**
 * What `path` (relative to `root`, the workspace) holds now, read as the file tools read: inside
 * the workspace only, never through a symbolic link leading out, regular files with one link only.
 * Files larger than a rewind restores are `unreadable`. Never throws.
 */
export async function fileState(root: string, path: string): Promise<FileState> {
  try {
    const target = await resolvedAsRecorded(root, path);
    if (!target.exists) return { type: "absent" };
    const file = await openInWorkspace(root, target, "read");
    try {
      if (!file.stats.isFile()) return { type: "unreadable", reason: `${target.display} is a directory now` };
      if (file.stats.size > maxRestoredBytes)
        return { type: "unreadable", reason: `${target.display} is larger than a rewind reads` };
      return { type: "content", hash: blobHash(await readAt(file.handle, 0, file.stats.size)) };
    } finally {
      await file.close();
    }
  } catch (error) {
    return { type: "unreadable", reason: error instanceof Error ? error.message : String(error) };
  }
}

/** Whether `state` is what `target` would put there. */
export function holdsTarget(state: FileState, target: FileTarget): boolean {
  return target.type === "absent" ? state.type === "absent" : state.type === "content" && state.hash === target.blob;
}

/** The state as one string: `absent`, a SHA-256, or undefined for an unreadable file. */
export function stateKey(state: FileState): string | undefined {
  return state.type === "absent" ? "absent" : state.type === "content" ? state.hash : undefined;
}

/**
 * Puts `target` at `path`: the blob's bytes written atomically (a temporary file renamed over the
 * name), or the file removed. Inside the workspace only (`resolveInWorkspace` refuses `..` and
 * links leading out); a blob whose bytes do not match its hash is refused. Throws an Error saying
 * why it could not.
 */
export async function restoreFile(
  root: string,
  path: string,
  target: FileTarget,
  blobs: Pick<BlobStore, "read">,
): Promise<void> {
  const resolved = await resolvedAsRecorded(root, path);
  if (target.type === "absent") return removeInWorkspace(root, resolved);
  const bytes = blobs.read(target.blob);
  if (blobHash(bytes) !== target.blob)
    throw new Error(`the content kept for ${resolved.display} is damaged (its blob does not match its hash)`);
  await replaceInWorkspace(root, resolved, bytes, target.mode);
}

/**
 * Removes the directory at `path` (relative to `root`) if it is there and empty: true when it was
 * removed. One that holds anything, or is not a directory, stays. Inside the workspace only, and
 * never through a symbolic link (as `restoreFile`). Throws an Error saying why it could not look.
 */
export async function removeEmptyDirectory(root: string, path: string): Promise<boolean> {
  const resolved = await resolvedAsRecorded(root, path);
  if (!resolved.exists) return false;
  return removeEmptyDirectoryInWorkspace(root, resolved);
}

// A checkpoint records the path the tool resolved (links followed); a path that resolves elsewhere
// now has a symbolic link in it, put there since: acting on it would change another file.
async function resolvedAsRecorded(root: string, path: string): ReturnType<typeof resolveInWorkspace> {
  const resolved = await resolveInWorkspace(root, path);
  if (resolved.display !== normalize(path))
    throw new Error(`${path} leads to ${resolved.display} through a symbolic link now; it is left as it is`);
  return resolved;
}

// As much as the file tools read or edit: a file the agent left was never larger.
const maxRestoredBytes = 20_000_000;
