import { normalize, sep } from "node:path";
import { describeContent } from "../content-parts.ts";
import type { Message, UserMessage } from "../session.ts";
import { checkpointOf, type FileCheckpoint } from "./checkpoints.ts";
import { fileState, holdsTarget, type FileState, type FileTarget } from "./rewind-files.ts";
import { readOnlyTools } from "./tools/index.ts";

/** A user message of the session: `number` counts them from 1, `index` is its place in the messages. */
export type UserTurn = { number: number; index: number; text: string };

/**
 * What rewinding to before `turn` does. The conversation loses `turn` and every message after it;
 * each file the agent's `write`/`edit` calls changed since gets back what it held before the first
 * of them (`files`). `notRestorable` lists the changes nothing was kept for; `commands`, the `bash`
 * commands run since, and `otherCalls`, the other tools that may change things (MCP): what they
 * changed is not undone.
 */
export type RewindPlan = {
  turn: UserTurn;
  /** Messages the conversation loses (from `turn.index` to the end). */
  removedMessages: number;
  files: FilePlan[];
  /**
   * The directories the agent's writes since created for their files, deepest first: removed
   * after the files when they are empty (one holding anything else stays).
   */
  directories: string[];
  notRestorable: { path: string; reason: string }[];
  commands: string[];
  otherCalls: string[];
};

/**
 * One file of a rewind. `status`: `restore` (it holds what the agent left: put `target` back),
 * `done` (it holds `target` already), `changed` (someone else changed it since the agent did: it
 * is not overwritten unless the user says so), `unreadable` (it cannot be checked: left as it is).
 */
export type FilePlan = {
  path: string;
  target: FileTarget;
  /** The SHA-256 of what the agent's last change left. */
  agentLeft: string;
  now: FileState;
  status: "restore" | "done" | "changed" | "unreadable";
};

/**
 * The user's messages of the session, in order: the turns a rewind can go back to. A user message
 * the user did not write is none: a compaction's summary (`compactionSummary`), a guardrail's
 * feedback for the model's next try.
 */
export function userTurns(messages: readonly Message[]): UserTurn[] {
  const turns: UserTurn[] = [];
  for (const [index, message] of messages.entries())
    if ("role" in message && message.role === "user" && isUsersOwn(message))
      turns.push({ number: turns.length + 1, index, text: describeContent(message.content) });
  return turns;
}

function isUsersOwn(message: UserMessage): boolean {
  return message.compactionSummary !== true && message.guardrail?.action !== "retry";
}

/**
 * Plans a rewind of `messages` to before `turn`, reading the files involved in the workspace
 * `root` (never changing them). The checkpoints come from the session, which is untrusted: only
 * well-formed ones count, and their paths are read as the file tools read (inside the workspace).
 * `pending`: the checkpoints recorded before a change (`pendingCheckpoints`), by call id, for
 * results that lack theirs.
 */
export async function planRewind(
  messages: readonly Message[],
  turn: UserTurn,
  root: string,
  pending: ReadonlyMap<string, FileCheckpoint> = new Map(),
): Promise<RewindPlan> {
  const later = messages.slice(turn.index);
  const changes = new Map<string, { target: FileTarget; agentLeft: string }>();
  const notRestorable = new Map<string, string>();
  const checkpointed = new Set<string>();
  const calls = new Map<string, { name: string; input: Record<string, unknown> }>();
  const commands: string[] = [];
  const otherCalls: string[] = [];
  const directories = new Set<string>();
  for (const message of later) {
    if ("type" in message && message.type === "tool_call") {
      calls.set(message.id, message);
      if (message.name === "bash" && typeof message.input.command === "string") commands.push(message.input.command);
      else if (!readOnlyTools.has(message.name) && !fileTools.has(message.name)) otherCalls.push(message.name);
      continue;
    }
    // A result without its checkpoint (the process died between the change and the result, which
    // was then answered on resume) takes the one recorded before the change.
    const checkpoint =
      checkpointOf(message) ??
      ("type" in message && message.type === "tool_result" ? pending.get(message.id) : undefined);
    if (checkpoint === undefined) continue;
    checkpointed.add((message as { id: string }).id);
    const { path, before, after } = checkpoint;
    for (const directory of checkpoint.directories ?? []) directories.add(normalize(directory));
    // The first change since the turn holds what to put back; the last, what the agent left.
    const first = changes.get(path);
    if (first !== undefined) first.agentLeft = after;
    else if (notRestorable.has(path)) continue;
    else if (before.type === "too-large")
      notRestorable.set(path, `it was ${before.size} bytes before, more than a rewind keeps`);
    else changes.set(path, { target: before, agentLeft: after });
  }
  // A file tool's result without a checkpoint (an older session, a call that failed before writing) changed nothing known.
  for (const message of later)
    if ("type" in message && message.type === "tool_result" && message.isError !== true) {
      const call = calls.get(message.id);
      if (call === undefined || !fileTools.has(call.name) || checkpointed.has(message.id)) continue;
      const path = typeof call.input.path === "string" ? call.input.path : "?";
      if (!changes.has(path)) notRestorable.set(path, `${call.name} kept no checkpoint of it`);
    }
  const files: FilePlan[] = [];
  for (const [path, { target, agentLeft }] of changes) {
    const now = await fileState(root, path);
    files.push({ path, target, agentLeft, now, status: statusOf(now, target, agentLeft) });
  }
  return {
    turn,
    removedMessages: messages.length - turn.index,
    files,
    // Deepest first: a directory is empty only once the ones inside it are gone.
    directories: [...directories].sort((a, b) => depthOf(b) - depthOf(a) || b.localeCompare(a)),
    notRestorable: [...notRestorable].map(([path, reason]) => ({ path, reason })),
    commands,
    otherCalls,
  };
}

const fileTools: ReadonlySet<string> = new Set(["write", "edit"]);

function depthOf(path: string): number {
  return path.split(sep).length;
}

function statusOf(now: FileState, target: FileTarget, agentLeft: string): FilePlan["status"] {
  if (now.type === "unreadable") return "unreadable";
  if (holdsTarget(now, target)) return "done";
  return now.type === "content" && now.hash === agentLeft ? "restore" : "changed";
}
