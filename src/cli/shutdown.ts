import { errorMessage } from "../errors.ts";
import { visibleText } from "./visible-text.ts";

/** What must happen before the CLI exits (close the session file, stop MCP servers), and a way to exit at once. */
export type Shutdown = {
  /** Registers a cleanup; they run last added first. */
  add: (cleanup: () => unknown) => void;
  /** Runs the cleanups, once; a failing one is reported on `errors` and the others still run. */
  run: () => Promise<void>;
  /**
   * Exits now with `code` (a second Ctrl-C, SIGTERM): runs the cleanups for at most `graceMs`,
   * lets stdout and stderr drain, and ends the process.
   */
  exitNow: (code: number) => void;
};

export function createShutdown(errors: NodeJS.WritableStream, graceMs = 2000): Shutdown {
  const cleanups: (() => unknown)[] = [];
  let running: Promise<void> | undefined;
  const run = (): Promise<void> =>
    (running ??= (async () => {
      for (const cleanup of cleanups.reverse()) {
        try {
          await cleanup();
        } catch (error) {
          errors.write(`simple-agent-loop: while exiting: ${visibleText(errorMessage(error))}\n`);
        }
      }
    })());
  return {
    add: (cleanup) => void cleanups.push(cleanup),
    run,
    exitNow: (code) => {
      const grace = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
      void Promise.race([run(), grace])
        .then(() => Promise.all([drain(process.stdout), drain(process.stderr)]))
        .finally(() => process.exit(code));
    },
  };
}

/** Resolves once everything written to `stream` so far has been handed to the system. */
export function drain(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    // A broken pipe takes nothing more; writing to it would only raise another error.
    if ((stream as { destroyed?: boolean }).destroyed === true) return resolve();
    if (!stream.write("", () => resolve())) stream.once("drain", () => resolve());
  });
}
