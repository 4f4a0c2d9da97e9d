import type { Message, ToolResultMessage } from "../session.ts";
import { blobHash, isBlobHash, type BlobStore } from "../store/blobs.ts";
import type { FileChange } from "./tools/workspace.ts";

/**
 * What a `write` or `edit` changed, recorded on its `tool_result` as `checkpoint` (metadata, never
 * sent to a model): `path` relative to the workspace; `before`, what the file held: its content
 * as a blob of the session's blob store (`blob`: its SHA-256; `mode`: its permission bits, for a
 * file someone deleted since, which a rewind makes again), nothing (`absent`: the call
 * created it), or only its size when it was too large to keep (`too-large`); `after`, the SHA-256
 * of the content the call left, to tell later whether someone else changed the file since;
 * `directories`, the parent directories the call created for the file (outermost first), which a
 * rewind removes again when they are empty.
 */
export type FileCheckpoint = {
  path: string;
  before: { type: "blob"; blob: string; mode?: number } | { type: "absent" } | { type: "too-large"; size: number };
  after: string;
  directories?: string[];
};

/** A tool result that carries a checkpoint. */
export type CheckpointedResult = ToolResultMessage & { checkpoint: FileCheckpoint };

/**
 * Keeps checkpoints for the file tools of one CLI run: `onFileChange` (the workspace's hook, see
 * `createWorkspace`) writes the previous content to `blobs` before the file is touched and holds
 * the checkpoint by call id; `attach` (in the loop's `afterToolCall` hook) sets it on that call's
 * result, so it enters the session and its log with the result. The blob goes to the blob store,
 * not into the message: the session in memory and the log stay small, and token estimates,
 * which count a message's JSON, never count a file's content. `pending` hears each checkpoint
 * before the file changes (the CLI records it in the log as a `checkpoint-pending` entry): a crash
 * between the change and the result leaves the checkpoint there.
 */
export function checkpointRecorder(
  blobs: Pick<BlobStore, "write">,
  options: { pending?: (callId: string, checkpoint: FileCheckpoint) => void } = {},
): {
  onFileChange: (change: FileChange) => void;
  attach: (result: ToolResultMessage) => void;
} {
  const waiting = new Map<string, FileCheckpoint>();
  return {
    onFileChange: ({ callId, path, previous, content, directories }) => {
      const before: FileCheckpoint["before"] =
        previous.type === "content"
          ? {
              type: "blob",
              blob: blobs.write(previous.bytes),
              ...(previous.mode === undefined ? {} : { mode: previous.mode }),
            }
          : previous;
      const checkpoint: FileCheckpoint = {
        path,
        before,
        after: blobHash(content),
        ...(directories === undefined || directories.length === 0 ? {} : { directories: [...directories] }),
      };
      options.pending?.(callId, checkpoint);
      waiting.set(callId, checkpoint);
    },
    attach: (result) => {
      const checkpoint = waiting.get(result.id);
      if (checkpoint === undefined) return;
      waiting.delete(result.id);
      // Set on the result before it enters the session (the hook runs before): a field of its own,
      // so the model's view, built from a result's output and content, never shows it.
      (result as CheckpointedResult).checkpoint = checkpoint;
    },
  };
}

/** The `customType` of the entry that holds a checkpoint before its file changes: `{ callId, checkpoint }`. */
export const pendingCheckpointEntry = "checkpoint-pending";

/**
 * The checkpoints of the log's `checkpoint-pending` entries, by call id: what a call was about to
 * change when a crash may have cut it off before its result recorded the checkpoint. Untrusted:
 * taken only well-formed, as `checkpointOf` takes them.
 */
export function pendingCheckpoints(entries: readonly { type: string }[]): Map<string, FileCheckpoint> {
  const found = new Map<string, FileCheckpoint>();
  for (const entry of entries) {
    const { customType, data } = entry as { customType?: unknown; data?: { callId?: unknown; checkpoint?: unknown } };
    if (entry.type !== "custom" || customType !== pendingCheckpointEntry || typeof data?.callId !== "string") continue;
    const checkpoint = checkpointOf({
      type: "tool_result",
      id: data.callId,
      output: "",
      checkpoint: data.checkpoint,
    } as Message);
    if (checkpoint !== undefined) found.set(data.callId, checkpoint);
  }
  return found;
}

/**
 * The checkpoint a message carries, or undefined. A session file is untrusted: a checkpoint is
 * taken only whole and well-formed (a string path, blob hashes that can name nothing but a blob).
 */
export function checkpointOf(message: Message): FileCheckpoint | undefined {
  if (!("type" in message) || message.type !== "tool_result") return undefined;
  const checkpoint = (message as { checkpoint?: unknown }).checkpoint;
  if (typeof checkpoint !== "object" || checkpoint === null) return undefined;
  const { path, before, after, directories } = checkpoint as Record<string, unknown>;
  if (typeof path !== "string" || path === "" || !isBlobHash(after)) return undefined;
  if (typeof before !== "object" || before === null) return undefined;
  // Directories to remove are taken only as a list of paths; anything else is no list at all.
  const created =
    Array.isArray(directories) &&
    directories.length > 0 &&
    directories.every((directory) => typeof directory === "string" && directory !== "")
      ? { directories: directories as string[] }
      : {};
  const state = before as Record<string, unknown>;
  if (state.type === "blob" && isBlobHash(state.blob))
    return { path, before: { type: "blob", blob: state.blob, ...modeOf(state.mode) }, after, ...created };
  if (state.type === "absent") return { path, before: { type: "absent" }, after, ...created };
  if (state.type === "too-large" && typeof state.size === "number" && Number.isSafeInteger(state.size))
    return { path, before: { type: "too-large", size: state.size }, after, ...created };
  return undefined;
}

/** A file's permission bits read from an untrusted log: only a plain mode (no set-id or sticky bit) is taken. */
export function modeOf(mode: unknown): { mode?: number } {
  return typeof mode === "number" && Number.isInteger(mode) && mode >= 0 && mode <= 0o777 ? { mode } : {};
}
