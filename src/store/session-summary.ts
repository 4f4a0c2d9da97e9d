import type { Message } from "../session.ts";
import { restingOutcome, type SessionOutcome } from "../session-turns.ts";
import type { LogEntry } from "./entries.ts";
import { StoreError } from "./store-error.ts";

/**
 * Where a stored session stands: `running` while a writer holds it (`owner` says which), `paused`
 * while a tool call waits for a human's decision (whether or not a writer still holds it: an
 * approval screen finds it after a reload or on another instance), `error` when its last message
 * ended a model turn with `stopReason: "error"`, `done` otherwise.
 */
export type SessionStatus = "running" | "paused" | "done" | "error";

/** One stored session, as `SessionStore.list` returns it. */
export type SessionSummary = {
  id: string;
  /** ISO-8601 UTC time of the last write to the session (its file's modification time for the file store). */
  lastActivity: string;
  status: SessionStatus;
  /** The writer that holds the session, for `running`: a lease's owner, or `<host>:<pid>` of a lock file. */
  owner?: string;
  /**
   * The first user message's text, at most 200 characters, NUL and lone surrogates as U+FFFD (see
   * `storableText`); absent before the first one.
   */
  title?: string;
  /**
   * The workspace the session last recorded (the `workspace` field of its last `workspace` custom
   * entry, as the CLI writes; NUL and lone surrogates as U+FFFD, as `list`'s filter reads them).
   */
  workspace?: string;
};

/** What `SessionStore.list` returns: one page, newest first. */
export type ListOptions = {
  /** The most sessions returned, 1 to 10,000. Default 100. */
  limit?: number;
  /**
   * Where the page starts: only sessions after this one in the order (newest first; ties by id,
   * descending). Either a session id (the last `id` of the previous page) or an ISO-8601 time
   * (sessions last active strictly before it). An unknown id is an `invalid-argument` StoreError.
   */
  before?: string;
  /** Only sessions whose last recorded workspace is this one. */
  workspace?: string;
  /** Only sessions with this status; `"paused"` lists those waiting for a human's approval. */
  status?: SessionStatus;
};

/** List options checked, with the defaults filled in. `before` is split into a time or an id. */
export type ListQuery = {
  limit: number;
  beforeTime: number | undefined;
  beforeId: string | undefined;
  workspace: string | undefined;
  status: SessionStatus | undefined;
};

/** The longest title kept. */
export const titleLength = 200;

const statuses: readonly SessionStatus[] = ["running", "paused", "done", "error"];

/** Checks `list`'s options; throws an `invalid-argument` StoreError naming the bad one. */
export function listQuery(options: ListOptions = {}): ListQuery {
  const { limit = 100, before, workspace, status } = options;
  const invalid = (what: string): StoreError => new StoreError(`list: ${what}`, { code: "invalid-argument" });
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000)
    throw invalid(`limit must be an integer from 1 to 10000, not ${String(limit)}`);
  if (before !== undefined && (typeof before !== "string" || before === ""))
    throw invalid("before must be a session id or an ISO-8601 time");
  if (workspace !== undefined && typeof workspace !== "string") throw invalid("workspace must be a string");
  if (status !== undefined && !statuses.includes(status))
    throw invalid(`status must be one of ${statuses.join(", ")}, not ${JSON.stringify(status)}`);
  const time = before !== undefined && isoTime.test(before) ? Date.parse(before) : Number.NaN;
  return {
    limit,
    beforeTime: Number.isFinite(time) ? time : undefined,
    beforeId: before !== undefined && !Number.isFinite(time) ? before : undefined,
    workspace: workspace === undefined ? undefined : storableText(workspace),
    status,
  };
}

const isoTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d/;

/**
 * A store's status for a session at rest, from the one outcome rule (`restingOutcome`): `paused`
 * and `error` as they are; every other end (done, stopped, aborted, unfinished) `done`, that is,
 * not waiting for anyone.
 */
export function restingStatus(outcome: SessionOutcome): Exclude<SessionStatus, "running"> {
  return outcome === "paused" || outcome === "error" ? outcome : "done";
}

/** Newest first; ties by id, descending, so pages never skip nor repeat a session. */
export function newestFirst(a: { time: number; id: string }, b: { time: number; id: string }): number {
  return b.time - a.time || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/**
 * What a store keeps about a session besides its entries, updated entry by entry as they are
 * written (or read back): the title, the workspace, and whether it rests `paused`, `done` or in
 * `error` (whether it is `running` depends on its writer, which the store knows).
 */
export type SummaryTracker = {
  add: (entry: LogEntry) => void;
  title: () => string | undefined;
  workspace: () => string | undefined;
  resting: () => Exclude<SessionStatus, "running">;
};

export function summaryTracker(): SummaryTracker {
  let title: string | undefined;
  let workspace: string | undefined;
  let last: unknown;
  // Tool calls whose approval is pending, by id.
  const pending = new Set<string>();
  const see = (message: unknown): void => {
    if (!isObject(message)) return;
    if (message.type === "tool_call" && typeof message.id === "string") {
      const approval = message.approval;
      if (isObject(approval) && approval.status === "pending") pending.add(message.id);
      else pending.delete(message.id);
    } else if (message.type === "tool_result" && typeof message.id === "string") pending.delete(message.id);
  };
  const forget = (message: unknown): void => {
    if (isObject(message) && typeof message.id === "string") pending.delete(message.id);
  };
  return {
    add: (entry) => {
      const value = entry as Record<string, unknown>;
      if (entry.type === "message") {
        const message = value.message;
        see(message);
        if (!isObject(message)) return;
        if (message.role !== "system") last = message;
        if (title === undefined && message.role === "user") title = textOf(message as Message);
      } else if (entry.type === "replace" || entry.type === "update") {
        see(value.message);
      } else if (entry.type === "splice") {
        if (Array.isArray(value.removed)) value.removed.forEach(forget);
        if (Array.isArray(value.inserted)) value.inserted.forEach(see);
      } else if (entry.type === "custom" && value.customType === "workspace") {
        const data = value.data;
        if (isObject(data) && typeof data.workspace === "string") workspace = storableText(data.workspace);
      }
    },
    title: () => title,
    workspace: () => workspace,
    resting: () => restingStatus(restingOutcome(last, pending.size > 0)),
  };
}

// A user message's text: its content, or the text of its parts where it has parts.
function textOf(message: Message): string | undefined {
  const content: unknown = (message as { content?: unknown }).content;
  let text: string;
  if (typeof content === "string") text = content;
  else if (Array.isArray(content))
    text = content
      .flatMap((part) => (isObject(part) && part.type === "text" && typeof part.text === "string" ? [part.text] : []))
      .join(" ");
  else return undefined;
  return storableText(text.length > titleLength ? text.slice(0, titleLength) : text);
}

/**
 * `text` as every store can keep it in a column of its own: NUL (which PostgreSQL's TEXT refuses)
 * and lone surrogates (which UTF-8 cannot hold, a cut title's half pair included) become U+FFFD.
 * For the summary's title and workspace only: messages are stored as JSON, where both are escapes.
 */
export function storableText(text: string): string {
  return text
    .replaceAll("\u0000", "\ufffd")
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
