import { closeSession, type FileStore, type SessionSummary } from "../store/index.ts";
import type { CliSession } from "./sessions.ts";

/**
 * The session the CLI works in now, and the ways the interactive prompt changes it (`/clear`,
 * `/resume`): the one before is closed (its file released) before the next is opened.
 */
export type SessionControl = {
  current: () => CliSession;
  /** Closes the current session and starts a new one, stored at its first task. */
  startNew: () => Promise<CliSession>;
  /** Closes the current session and continues session `id` (of any workspace: it then works in this one). */
  resume: (id: string) => Promise<CliSession>;
  /** The stored sessions of this workspace that have a task, newest first, at most `limit`. */
  list: (limit: number) => Promise<SessionSummary[]>;
  /** Closes the current session (the end of the process). */
  close: () => Promise<void>;
};

/** A `SessionControl` starting at `first`; `open` opens a new session (no `resume`) or continues one. */
export function sessionControl(options: {
  store: FileStore;
  workspace: string;
  first: CliSession;
  open: (resume?: { id: string }) => Promise<CliSession>;
}): SessionControl {
  let current = options.first;
  const close = async (): Promise<void> => {
    const session = current.stored();
    if (session !== undefined) await closeSession(session);
  };
  // The next session opens before the current one closes: a session that cannot be opened (open in
  // another process) leaves the user where they were. The one resumed may be the current one.
  const replace = async (resume?: { id: string }): Promise<CliSession> => {
    if (resume !== undefined && resume.id === current.id) return current;
    const next = await options.open(resume);
    await close();
    return (current = next);
  };
  return {
    current: () => current,
    startNew: () => replace(),
    resume: (id) => replace({ id }),
    list: async (limit) => {
      const page = await options.store.list({ workspace: options.workspace, limit: Math.max(limit * 2, 20) });
      return page.filter((summary) => summary.title !== undefined).slice(0, limit);
    },
    close,
  };
}

/**
 * `sessions`, where `switched` is called each time `/clear` or `/resume` puts another session in
 * use (what was allowed for one session, such as an "always" answer, ends with it).
 */
export function onSessionSwitch(sessions: SessionControl, switched: () => void): SessionControl {
  const replaced = async (replace: () => Promise<CliSession>): Promise<CliSession> => {
    const before = sessions.current();
    const opened = await replace();
    if (opened !== before) switched();
    return opened;
  };
  return {
    ...sessions,
    startNew: () => replaced(sessions.startNew),
    resume: (id) => replaced(() => sessions.resume(id)),
  };
}
