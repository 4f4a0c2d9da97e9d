import { randomBytes } from "node:crypto";
import { notifySessionChange, type Session } from "../session.ts";
import type { BlobStore } from "../store/blobs.ts";
import { appendEntry, type LogEntry } from "../store/index.ts";
import {
  fileState,
  holdsTarget,
  removeEmptyDirectory,
  restoreFile,
  stateKey,
  type FileTarget,
} from "./rewind-files.ts";
import { modeOf } from "./checkpoints.ts";
import type { RewindMarker } from "./rewind-marker.ts";
import type { RewindPlan } from "./rewind-plan.ts";

/**
 * The `customType` of the entry a rewind writes first: its intent, whole (which messages go, and
 * for each file what to put back and from which state), before anything changes.
 */
export const rewindStartEntry = "rewind-start";

/** The `customType` of the entry a rewind writes last: what it did. Its absence marks a rewind a crash cut short. */
export const rewindEndEntry = "rewind-end";

/**
 * What a rewind did: the files it put back and removed, the directories the agent had created
 * that it removed (empty once those files were gone), and the files it left as they are, with why.
 */
export type RewindReport = {
  turn: number;
  restored: string[];
  deleted: string[];
  removedDirectories: string[];
  skipped: { path: string; reason: string }[];
  /** Finished on a later start, after a crash had cut it short. */
  recovered?: true;
};

/** What the intent entry records for one file: put `target` back if the file still holds `expected` (a SHA-256 or `absent`). */
type IntendedFile = { path: string; target: FileTarget; expected: string };

type RewindIntent = {
  id: string;
  /** The index of the user message the conversation goes back to before. */
  index: number;
  turn: number;
  files: IntendedFile[];
  /** Directories the agent created, deepest first: removed after the files if empty. */
  directories: string[];
  skipped: { path: string; reason: string }[];
};

/**
 * Rewinds `session` (bound to its store) as `plan` says: files the agent changed get back what
 * they held before `plan.turn`, and the conversation loses that turn and everything after it.
 * `overwrite`: the files the user said to put back although someone else changed them since (the
 * others are left as they are); `keep`: files left as they are in any case. Reliable across a crash: the intent is recorded first (a
 * `rewind-start` entry), each file is replaced atomically, then the messages are removed (a
 * `splice` with reason `rewind`, which every store records and replays) and the end recorded (a
 * `rewind-end` entry); `finishRewind` completes a rewind a crash cut short. `onStep` hears each
 * file done, in order. `marker`: set before the intent is recorded, cleared after the end.
 */
export async function rewindSession(
  session: Session,
  plan: RewindPlan,
  options: {
    root: string;
    blobs: Pick<BlobStore, "read">;
    overwrite?: ReadonlySet<string>;
    /** Files left as they are whatever they hold, with why (a protected place no one was asked about). */
    keep?: ReadonlyMap<string, string>;
    onStep?: (path: string) => void | Promise<void>;
    marker?: RewindMarker;
  },
): Promise<RewindReport> {
  const files: IntendedFile[] = [];
  const skipped: { path: string; reason: string }[] = [];
  for (const file of plan.files) {
    const expected = stateKey(file.now);
    const kept = options.keep?.get(file.path);
    if (file.status === "done") continue;
    if (kept !== undefined) skipped.push({ path: file.path, reason: kept });
    else if (file.status === "unreadable" || expected === undefined)
      skipped.push({ path: file.path, reason: file.now.type === "unreadable" ? file.now.reason : "unreadable" });
    else if (file.status === "changed" && options.overwrite?.has(file.path) !== true)
      skipped.push({ path: file.path, reason: "changed since the agent left it; kept as it is" });
    else files.push({ path: file.path, target: file.target, expected });
  }
  const intent: RewindIntent = {
    id: randomBytes(6).toString("hex"),
    index: plan.turn.index,
    turn: plan.turn.number,
    files,
    directories: plan.directories,
    skipped,
  };
  options.marker?.set();
  appendEntry(session, rewindStartEntry, intent);
  return complete(session, intent, { ...options, spliced: false });
}

/**
 * Finishes a rewind a crash cut short (a `rewind-start` in `entries`, the log of `session`,
 * without its `rewind-end`): the files it had not put back yet are (the same checks: a file that
 * holds neither what the rewind expected nor what it puts back is left as it is), the messages
 * are removed if they were not, and the end is recorded. Resolves with its report, or undefined
 * when every rewind of the log was finished.
 */
export async function finishRewind(
  session: Session,
  entries: readonly LogEntry[],
  options: { root: string; blobs: Pick<BlobStore, "read">; marker?: RewindMarker },
): Promise<RewindReport | undefined> {
  const started = new Map<string, RewindIntent>();
  const spliced = new Set<string>();
  for (const entry of entries) {
    const fields = entry as { customType?: unknown; data?: unknown; details?: { rewind?: unknown } };
    if (entry.type === "splice" && typeof fields.details?.rewind === "string") spliced.add(fields.details.rewind);
    if (entry.type !== "custom") continue;
    const intent = intentOf(fields.data);
    if (fields.customType === rewindStartEntry && intent !== undefined) started.set(intent.id, intent);
    const id = (fields.data as { id?: unknown } | undefined)?.id;
    if (fields.customType === rewindEndEntry && typeof id === "string") started.delete(id);
  }
  const unfinished = [...started.values()].at(-1);
  if (unfinished === undefined) return undefined;
  const report = await complete(session, unfinished, { ...options, spliced: spliced.has(unfinished.id) });
  return { ...report, recovered: true };
}

// Steps 2 to 4 of a rewind whose intent is recorded: each file, the messages, the end. Safe to
// run again after a crash at any point: a file already put back is recognized and left.
async function complete(
  session: Session,
  intent: RewindIntent,
  options: {
    root: string;
    blobs: Pick<BlobStore, "read">;
    spliced: boolean;
    onStep?: (path: string) => void | Promise<void>;
    marker?: RewindMarker;
  },
): Promise<RewindReport> {
  const report: RewindReport = {
    turn: intent.turn,
    restored: [],
    deleted: [],
    removedDirectories: [],
    skipped: [...intent.skipped],
  };
  for (const { path, target, expected } of intent.files) {
    const now = await fileState(options.root, path);
    if (holdsTarget(now, target)) {
      (target.type === "absent" ? report.deleted : report.restored).push(path);
    } else if (stateKey(now) !== expected) {
      report.skipped.push({
        path,
        reason: now.type === "unreadable" ? now.reason : "changed while the rewind ran; kept as it is",
      });
    } else {
      try {
        await restoreFile(options.root, path, target, options.blobs);
        (target.type === "absent" ? report.deleted : report.restored).push(path);
      } catch (error) {
        report.skipped.push({ path, reason: error instanceof Error ? error.message : String(error) });
      }
    }
    await options.onStep?.(path);
  }
  // A directory that holds anything (a file kept, one someone else put there) stays, unreported.
  for (const directory of intent.directories) {
    const removed = await removeEmptyDirectory(options.root, directory).catch(() => false);
    if (removed) report.removedDirectories.push(directory);
  }
  const first = session.messages[intent.index];
  if (!options.spliced && first !== undefined && "role" in first && first.role === "user") {
    const removed = session.messages.splice(intent.index);
    notifySessionChange(session, {
      type: "splice",
      index: intent.index,
      removed,
      inserted: [],
      reason: "rewind",
      details: { rewind: intent.id, turn: intent.turn },
    });
  }
  appendEntry(session, rewindEndEntry, { id: intent.id, ...report });
  options.marker?.clear();
  return report;
}

// A rewind-start entry's data, read from an untrusted log: taken only whole and well-formed.
function intentOf(data: unknown): RewindIntent | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const { id, index, turn, files, skipped, directories } = data as Record<string, unknown>;
  if (typeof id !== "string" || !isIndex(index) || !isIndex(turn)) return undefined;
  if (!Array.isArray(files) || !Array.isArray(skipped)) return undefined;
  const intended: IntendedFile[] = [];
  for (const file of files) {
    const { path, target, expected } = (file ?? {}) as Record<string, unknown>;
    const kind = (target as { type?: unknown } | undefined)?.type;
    const blob = (target as { blob?: unknown } | undefined)?.blob;
    if (typeof path !== "string" || typeof expected !== "string") return undefined;
    if (kind === "absent") intended.push({ path, target: { type: "absent" }, expected });
    else if (kind === "blob" && typeof blob === "string")
      intended.push({
        path,
        target: { type: "blob", blob, ...modeOf((target as { mode?: unknown }).mode) },
        expected,
      });
    else return undefined;
  }
  const reasons = skipped.filter(
    (entry): entry is { path: string; reason: string } =>
      typeof (entry as { path?: unknown }).path === "string" &&
      typeof (entry as { reason?: unknown }).reason === "string",
  );
  const created = Array.isArray(directories)
    ? directories.filter((directory): directory is string => typeof directory === "string" && directory !== "")
    : [];
  return { id, index, turn, files: intended, directories: created, skipped: reasons };
}

function isIndex(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}
