import { watch, type FSWatcher } from "node:fs";
import { excerpt, type ReadLimits } from "./log-lines.ts";
import { createRawLogReader, type RawLogReader, type RawLogUpdate } from "./log-reader.ts";

/**
 * Calls `onUpdate` with the whole log at `path` (`reset: true`), then with each change: the lines
 * appended since, or everything again after a truncation or rewrite (see `RawLogReader`), unparsed,
 * a long change in several updates (the first one resetting). Changes are
 * noticed by `fs.watch` and, where it misses them (network file systems, a file replaced by
 * rename), by polling every `pollInterval` ms. Updates never overlap and come in file order.
 * A read that fails is reported as an update with a problem and no line. Returns a stop function;
 * no update is delivered after it is called.
 */
export function followLog(
  path: string,
  onUpdate: (update: RawLogUpdate) => void,
  options: { pollInterval: number; limits: ReadLimits },
): () => void {
  const reader = createRawLogReader(path, options.limits);
  let stopped = false;
  let reading = false;
  let again = false;
  let watcher: FSWatcher | undefined;

  const check = async (): Promise<void> => {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      do {
        again = false;
        const update = await readOrProblem(reader, path);
        if (stopped || update === undefined) continue;
        // A new file (or none) at the path: the old watch follows the old file, if any.
        if (update.reset) rewatch(update.missing !== true);
        // A long change comes in several reads, one after the other; a read that only scanned a long line says nothing.
        if (update.more === true) again = true;
        if (update.more !== true || update.reset || update.lines.length > 0 || update.problems.length > 0)
          onUpdate(update);
      } while (again && !stopped);
    } finally {
      reading = false;
    }
  };

  const rewatch = (exists: boolean): void => {
    watcher?.close();
    watcher = undefined;
    if (exists)
      watcher = watchChanges(
        path,
        () => void check(),
        (failed) => void (watcher === failed && (watcher = undefined)),
      );
  };

  const timer = setInterval(() => void check(), options.pollInterval);
  timer.unref();
  void check();

  return () => {
    stopped = true;
    clearInterval(timer);
    watcher?.close();
  };
}

// What the reader read, or a read that failed as an update with a problem and no line.
async function readOrProblem(reader: RawLogReader, path: string): Promise<RawLogUpdate | undefined> {
  try {
    return await reader.read();
  } catch (error) {
    return {
      reset: false,
      firstLine: 0,
      lines: [],
      problems: [
        { message: `cannot read ${path}: ${excerpt(error instanceof Error ? error.message : String(error))}` },
      ],
    };
  }
}

// A watch on the file at path, or undefined where none can be set. Polling goes on regardless: a
// watch that fails just stops (and says so through onFailed).
function watchChanges(
  path: string,
  onChange: () => void,
  onFailed: (watcher: FSWatcher) => void,
): FSWatcher | undefined {
  try {
    const watcher = watch(path, { persistent: false }, onChange);
    watcher.on("error", () => {
      watcher.close();
      onFailed(watcher);
    });
    return watcher;
  } catch {
    return undefined;
  }
}
