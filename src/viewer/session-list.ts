import { jsonNestedDeeperThan } from "../session.ts";
import { restingOutcome, type SessionOutcome } from "../session-turns.ts";
import { readdir, realpath, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { defaultReadLimits, type ReadLimits } from "./log-lines.ts";
import { createRawLogReader, type RawLogReader } from "./log-reader.ts";

/**
 * How a session's last run ended, as its log tells: `done` (the model ended its turn), `paused`
 * (a tool call waits for approval), `aborted`, `error`, `stopped` (the model stopped for another
 * reason: output limit, refusal, content filter...), `unfinished` (a task or tool results with no
 * answer after them: running now, or cut short) or `empty` (no task yet).
 */
export type { SessionOutcome };

/** One session log of a directory, as the viewer lists it. */
export type SessionSummary = {
  /** The file's name in the directory: the `file` parameter of the viewer's other endpoints. */
  file: string;
  /** The file's size in bytes. */
  size: number;
  /** Messages in the session as recorded: appended ones, less those compaction removed, plus what it inserted. */
  messages: number;
  /** ISO-8601 time of the newest entry, or the file's modification time when no entry has one. */
  lastActivity: string;
  /** The first user message, cut to 120 characters ("" if none). */
  title: string;
  /** The last user message (the latest task or follow-up), cut to 120 characters ("" if none). */
  latestTask: string;
  /** The user messages recorded: tasks and follow-ups (a background task's delivered outcome is not one). */
  tasks: number;
  /** The directory the session worked in (the CLI's last `workspace` entry), or null when the log names none. */
  workspace: string | null;
  outcome: SessionOutcome;
  /** Tokens of every model call recorded: `input` (whole prompts, cached parts included) and `output`. */
  tokens: { input: number; output: number };
  /** Lines that could not be read. */
  problems: number;
};

/**
 * A function listing the session logs (`*.jsonl`, not hidden) directly in `directory` (a real
 * path: no symlink in it), newest activity first. A symlink leading out of the directory is not
 * listed. Each log is summarized as it grows: only what was appended since the last listing is
 * read (all of it again after a rewrite), a piece at a time, so a listing holds little memory
 * however large the logs are.
 */
export function createSessionLister(
  directory: string,
  limits: ReadLimits = defaultReadLimits,
): () => Promise<SessionSummary[]> {
  const summarizers = new Map<string, { path: string; summarize: () => Promise<SessionSummary> }>();
  return serialized(async () => {
    const names = (await readdir(directory)).filter(isSessionFileName);
    const summaries: SessionSummary[] = [];
    for (const name of names) {
      const path = await realpath(join(directory, name)).catch(() => undefined);
      const stats =
        path === undefined || dirname(path) !== directory ? undefined : await stat(path).catch(() => undefined);
      if (path === undefined || stats === undefined || !stats.isFile()) continue;
      let summarizer = summarizers.get(name);
      if (summarizer?.path !== path) {
        summarizer = { path, summarize: createSessionSummarizer(path, name, limits) };
        summarizers.set(name, summarizer);
      }
      const summary = await summarizer.summarize().catch(() => undefined);
      if (summary !== undefined) summaries.push(summary);
    }
    const present = new Set(names);
    for (const name of summarizers.keys()) if (!present.has(name)) summarizers.delete(name);
    return summaries.sort(
      (a, b) => Date.parse(b.lastActivity) - Date.parse(a.lastActivity) || a.file.localeCompare(b.file),
    );
  });
}

/** A name the viewer serves from a directory: a plain `*.jsonl` file name, not hidden, no path in it. */
export function isSessionFileName(name: string): boolean {
  return name.endsWith(".jsonl") && !name.startsWith(".") && !/[/\\\0]/.test(name);
}

/**
 * A function summarizing the session log at `path`, listed as `file`, each call reading only what
 * was appended since the previous one (see `createSessionLister`). Calls may overlap.
 */
export function createSessionSummarizer(
  path: string,
  file: string,
  limits: ReadLimits = defaultReadLimits,
): () => Promise<SessionSummary> {
  const reader: RawLogReader = createRawLogReader(path, limits);
  let tally = emptyTally();
  return serialized(async () => {
    for (
      let update = await reader.read();
      update !== undefined;
      update = update.more === true ? await reader.read() : undefined
    ) {
      if (update.reset) tally = emptyTally();
      tally.problems += update.problems.filter((problem) => problem.line !== undefined).length;
      for (const bytes of update.lines) count(tally, bytes);
    }
    const stats = await stat(path);
    return {
      file,
      size: stats.size,
      messages: tally.messages,
      lastActivity: new Date(Number.isFinite(tally.latest) ? tally.latest : stats.mtime.getTime()).toISOString(),
      title: (tally.title ?? "").slice(0, 120),
      latestTask: (tally.latestTask ?? "").slice(0, 120),
      tasks: tally.tasks,
      workspace: tally.workspace,
      outcome: restingOutcome(tally.last, tally.waiting.size > 0),
      tokens: { input: tally.input, output: tally.output },
      problems: tally.problems,
    };
  });
}

/** What a summary counts, line by line. */
type Tally = {
  messages: number;
  latest: number;
  title: string | undefined;
  latestTask: string | undefined;
  tasks: number;
  workspace: string | null;
  /** Tool calls waiting for approval, by id. */
  waiting: Set<string>;
  /** The last message, system messages aside: with `waiting`, what the outcome is decided by. */
  last?: Record<string, unknown>;
  input: number;
  output: number;
  problems: number;
};

function emptyTally(): Tally {
  return {
    messages: 0,
    latest: Number.NEGATIVE_INFINITY,
    title: undefined,
    latestTask: undefined,
    tasks: 0,
    workspace: null,
    waiting: new Set(),
    input: 0,
    output: 0,
    problems: 0,
  };
}

function count(tally: Tally, bytes: Buffer): void {
  const text = bytes.toString("utf8").trim();
  if (text === "") return;
  let entry: unknown;
  try {
    if (jsonNestedDeeperThan(text)) throw new RangeError("nested too deep");
    entry = JSON.parse(text);
  } catch {
    tally.problems++;
    return;
  }
  if (!isObject(entry) || typeof entry.type !== "string") {
    tally.problems++;
    return;
  }
  const message = isObject(entry.message) ? entry.message : undefined;
  tally.latest = Math.max(tally.latest, time(entry.ts), time(message?.ts));
  if (entry.type === "splice" && Array.isArray(entry.removed) && Array.isArray(entry.inserted))
    tally.messages += entry.inserted.length - entry.removed.length;
  if (
    entry.type === "custom" &&
    entry.customType === "workspace" &&
    isObject(entry.data) &&
    typeof entry.data.workspace === "string"
  )
    tally.workspace = entry.data.workspace;
  // A message re-recorded (`update`, `replace`) may change an approval; its tokens were counted when it was appended.
  if ((entry.type === "update" || entry.type === "replace") && message !== undefined) trackApproval(tally, message);
  if (entry.type !== "message" || message === undefined) return;
  tally.messages++;
  // A background task's outcome comes as a user message the user did not write: no task of theirs.
  if (message.role === "user" && typeof message.content === "string" && typeof message.deliversTask !== "string") {
    tally.title ??= message.content;
    tally.latestTask = message.content;
    tally.tasks++;
  }
  if (isObject(message.usage)) {
    tally.input += finite(message.usage.inputTokens);
    tally.output += finite(message.usage.outputTokens);
  }
  if (message.type === "tool_result" && typeof message.id === "string") tally.waiting.delete(message.id);
  if (message.role !== "system") tally.last = message;
  trackApproval(tally, message);
}

function trackApproval(tally: Tally, message: Record<string, unknown>): void {
  if (message.type !== "tool_call" || typeof message.id !== "string") return;
  const pending = isObject(message.approval) && message.approval.status === "pending";
  if (pending) tally.waiting.add(message.id);
  else tally.waiting.delete(message.id);
}

// One call at a time: the readers behind these functions follow one file position each.
function serialized<T>(run: () => Promise<T>): () => Promise<T> {
  let last: Promise<unknown> = Promise.resolve();
  return () => {
    const next = last.then(run, run);
    last = next.catch(() => undefined);
    return next;
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function finite(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

function time(value: unknown): number {
  const parsed = typeof value === "string" ? Date.parse(value) : Number.NaN;
  return Number.isNaN(parsed) ? Number.NEGATIVE_INFINITY : parsed;
}
