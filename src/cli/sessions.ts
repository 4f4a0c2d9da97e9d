import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { extendSession, type JsonObject, type Session } from "../session.ts";
import { appendEntry, fileStore, isStoreError, loadEntries, type FileStore, type LogEntry } from "../store/index.ts";
import { CliError } from "./cli-error.ts";
import { cliHome } from "./cli-home.ts";

/**
 * The session the CLI works in, bound to its file in the store once stored, so everything is
 * saved as it happens. A resumed session is stored from the start; a new one only by its first
 * `store()` (its first task), so a CLI left without a task leaves no file behind.
 */
export type CliSession = {
  id: string;
  path: string;
  resumed: boolean;
  /** A resumed session last used in another workspace: that one (it works in the new one now). */
  movedFrom?: string;
  /** The session in its file: creates the file the first time for a new session; every call resolves to the same session. */
  store: () => Promise<Session>;
  /** The session if it is in its file already, else undefined. */
  stored: () => Session | undefined;
  /**
   * The session as the next task would start from, without storing it: the stored one, or for a
   * new one not stored yet its system prompt alone (what `/context` measures).
   */
  preview: () => Session;
};

/**
 * The session store of the CLI: `$SIMPLE_AGENT_LOOP_HOME/sessions` (default
 * `~/.simple-agent-loop/sessions`), one JSONL file per session.
 */
export function cliStore(environment: NodeJS.ProcessEnv): FileStore {
  return fileStore(sessionsDirectory(environment));
}

/** Where the CLI keeps its sessions. */
export function sessionsDirectory(environment: NodeJS.ProcessEnv): string {
  return join(cliHome(environment), "sessions");
}

/**
 * A new session (its file, written by `store()`, starts with a `workspace` custom entry, then the
 * system prompt) or a resumed one: `resume.id`, or without an id the latest session of this
 * workspace that has a task in it. A resumed session used from another workspace records the
 * new one and gets `movedPrompt(previous)` as a system message, so the model is told where the
 * tools work now. Throws a `CliError` for a session that does not exist or is open in another
 * process.
 */
export async function openCliSession(
  store: FileStore,
  options: {
    workspace: string;
    resume?: { id?: string };
    systemPrompt: string;
    movedPrompt: (previous: string) => string;
    details: JsonObject;
    /** How the user starts the CLI, for the command that lists the sessions (`simple-agent-loop`). */
    command?: string;
  },
): Promise<CliSession> {
  const { workspace, resume } = options;
  const record = (session: Session): void => appendEntry(session, workspaceEntry, { ...options.details, workspace });
  if (resume === undefined) {
    const id = newSessionId();
    let session: Session | undefined;
    let opening: Promise<Session> | undefined;
    const create = async (): Promise<Session> => {
      const created = await open(store, id);
      record(created);
      extendSession(created, { role: "system", content: options.systemPrompt });
      return (session = created);
    };
    return {
      id,
      path: store.path(id),
      resumed: false,
      store: () => (opening ??= create()),
      stored: () => session,
      preview: () => session ?? { messages: [{ role: "system", content: options.systemPrompt }] },
    };
  }
  const id = resume.id ?? (await latestSessionOf(store, workspace));
  if (id === undefined) throw new CliError(`no session of ${workspace} to resume; start one without --resume`);
  // A mistyped id is an error, never the latest session with the typo sent to the model as a task.
  const listThem = `list the sessions with: ${options.command ?? "simple-agent-loop"} view (or ls ${dirname(store.path("session"))})`;
  if (!isSessionId(id))
    throw new CliError(`no session ${id}: a session id looks like 20250102-030405-a1b2c3; ${listThem}`);
  if (!existsSync(store.path(id))) throw new CliError(`no session ${id} (there is no ${store.path(id)}); ${listThem}`);
  const session = await open(store, id);
  const entries = await loadEntries(store.path(id), { onWarning: () => undefined });
  const previous = workspaceOf(entries);
  const opened: CliSession = {
    id,
    path: store.path(id),
    resumed: true,
    store: () => Promise.resolve(session),
    stored: () => session,
    preview: () => session,
  };
  if (previous === workspace) return opened;
  record(session);
  if (previous === undefined) return opened;
  extendSession(session, { role: "system", content: options.movedPrompt(previous) });
  return { ...opened, movedFrom: previous };
}

/** The `customType` of the entry that records where a session works. */
export const workspaceEntry = "workspace";

/**
 * The id of the most recently changed session whose (last recorded) workspace is `workspace`
 * and which has at least one task: a session opened and left without a task is not worth resuming.
 */
export async function latestSessionOf(store: FileStore, workspace: string): Promise<string | undefined> {
  // Newest first (ties by id, which sorts by creation time), a page at a time; a title means a user message.
  let before: string | undefined;
  for (;;) {
    const page = await store.list(before === undefined ? { workspace } : { workspace, before });
    const found = page.find((summary) => summary.title !== undefined);
    if (found !== undefined) return found.id;
    if (page.length === 0) return undefined;
    before = page[page.length - 1]!.id;
  }
}

/** A new id, sortable by creation time: `20250102-030405-a1b2c3` (UTC). */
export function newSessionId(date = new Date()): string {
  const stamp = date.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

/** Whether `text` has the form of an id made by `newSessionId`. */
export function isSessionId(text: string): boolean {
  return /^\d{8}-\d{6}-[0-9a-f]{6}$/.test(text);
}

function workspaceOf(entries: readonly LogEntry[]): string | undefined {
  let workspace: string | undefined;
  for (const entry of entries) {
    if (entry.type !== "custom" || (entry as { customType?: unknown }).customType !== workspaceEntry) continue;
    const data = (entry as { data?: { workspace?: unknown } }).data;
    if (typeof data?.workspace === "string") workspace = data.workspace;
  }
  return workspace;
}

async function open(store: FileStore, id: string): Promise<Session> {
  try {
    return await store.open(id);
  } catch (error) {
    if (isStoreError(error) && error.code === "locked")
      throw new CliError(`session ${id} is open in another process; close that one first`);
    if (isStoreError(error) && error.code === "invalid-argument") throw new CliError(error.message, "usage");
    throw error;
  }
}
