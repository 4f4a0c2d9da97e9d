import { errorMessage } from "../errors.ts";
import type { Session } from "../session.ts";
import { blobDirectory, fileBlobStore } from "../store/blobs.ts";
import { closeSession, isStoreError, loadEntries, type FileStore } from "../store/index.ts";
import type { Style } from "./ansi.ts";
import { describeReport } from "./rewind-command.ts";
import { markedRewind, rewindMarker } from "./rewind-marker.ts";
import { finishRewind } from "./rewind.ts";
import type { SessionControl } from "./session-control.ts";
import type { CliSession } from "./sessions.ts";
import { visibleLine, visibleText } from "./visible-text.ts";

/** Where a recovery works and says what it did. */
export type RewindRecoveryOptions = {
  /** The workspace (a real path): the files of a rewind are in it. */
  root: string;
  /** The CLI's home, where the workspace's rewind mark is. */
  home: string;
  store: FileStore;
  style: Style;
  /** Where the report goes (stderr under `--json`). */
  out: NodeJS.WritableStream;
};

/**
 * Finishes rewinds a crash cut short, before anything else uses the sessions, and says so:
 * `session` for a session being resumed (at the start with `--resume`, or by `/resume`), `marked`
 * at a start with a new session, for the session the workspace's rewind mark names (a rewind of
 * the session in use when the CLI was killed). A rewind is finished as `finishRewind` does
 * (files not put back yet are, if they still hold what the rewind expected; the conversation cut
 * once); nothing else of that session changes.
 */
export function rewindRecovery(options: RewindRecoveryOptions): {
  session: (opened: CliSession) => Promise<void>;
  marked: (current: string) => Promise<void>;
} {
  return {
    session: async (opened) => {
      const session = opened.stored();
      if (session !== undefined) await finish(session, opened.id, opened.path, options, false);
    },
    marked: async (current) => {
      const id = markedRewind(options.home, options.root);
      if (id === undefined || id === current) return;
      let session: Session;
      try {
        session = await options.store.open(id);
      } catch (error) {
        // Open in another CLI: that one finishes it, if it resumed it; else the next start does.
        const why =
          isStoreError(error) && error.code === "locked" ? "it is open in another process" : errorMessage(error);
        options.out.write(
          options.style.yellow(
            `A rewind of session ${visibleLine(id)} was cut short and could not be finished now: ${visibleText(why)}\n`,
          ),
        );
        return;
      }
      try {
        await finish(session, id, options.store.path(id), options, true);
      } finally {
        await closeSession(session);
      }
    },
  };
}

/** `sessions`, with each session `/resume` opens checked for a rewind to finish first. */
export function withRewindRecovery(
  sessions: SessionControl,
  recover: (opened: CliSession) => Promise<void>,
): SessionControl {
  return {
    ...sessions,
    resume: async (id) => {
      const opened = await sessions.resume(id);
      await recover(opened);
      return opened;
    },
  };
}

async function finish(
  session: Session,
  id: string,
  path: string,
  options: RewindRecoveryOptions,
  named: boolean,
): Promise<void> {
  const marker = rewindMarker(options.home, options.root, id);
  const report = await finishRewind(session, await loadEntries(path, { onWarning: () => undefined }), {
    root: options.root,
    blobs: fileBlobStore(blobDirectory(path), { sync: true }),
    marker,
  });
  if (report === undefined) {
    // Every rewind of the session was finished (the crash came after its end was recorded).
    if (markedRewind(options.home, options.root) === id) marker.clear();
    return;
  }
  // terminal-safe: describeReport makes every path, reason and the session's id visible.
  options.out.write(describeReport(report, options.style, named ? id : undefined));
}
