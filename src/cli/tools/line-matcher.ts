import type { Worker } from "node:worker_threads";

/** A line of text that matched, 1-based, cut to 300 characters. */
export type MatchedLine = { line: number; text: string };

/**
 * Tests the lines of texts against a regular expression from the model in a worker thread, so a
 * pattern that backtracks without end (`^(a+)+$` on a long line) costs at most `timeoutMs` in
 * all and can be stopped: when the time is spent or `signal` aborts, the worker is terminated and
 * `match` rejects with an Error that says why. The main thread never runs the pattern. `close`
 * ends the worker; call it when done.
 */
export type LineMatcher = {
  /** Lines of `text` (split at `\n`, a `\r` before it dropped) that match, in order, at most `max`. */
  match: (text: string, max: number) => Promise<MatchedLine[]>;
  close: () => Promise<void>;
};

export function lineMatcher(pattern: RegExp, options: { timeoutMs: number; signal: AbortSignal }): LineMatcher {
  let worker: Worker | undefined;
  let spentMs = 0;
  const compiled = { source: pattern.source, flags: pattern.flags.replace(/[gy]/g, "") };
  const stop = async (): Promise<void> => {
    const running = worker;
    worker = undefined;
    await running?.terminate();
  };
  return {
    // Called one at a time: each call waits for the one before.
    match: async (text, max) => {
      options.signal.throwIfAborted();
      const running = (worker ??= await takeWorker());
      options.signal.throwIfAborted();
      const began = performance.now();
      return new Promise<MatchedLine[]>((resolve, reject) => {
        const finish = (): void => {
          clearTimeout(timer);
          options.signal.removeEventListener("abort", onAbort);
          running.off("message", onMessage);
          running.off("error", onError);
          running.off("exit", onExit);
          spentMs += performance.now() - began;
        };
        const fail = (error: Error): void => {
          finish();
          void stop();
          reject(error);
        };
        const timer = setTimeout(
          () => {
            fail(
              new Error(
                `the pattern took longer than ${options.timeoutMs / 1000} s to match and was stopped (nested quantifiers like (a+)+ can take exponential time); simplify the pattern or narrow path and glob`,
              ),
            );
          },
          Math.max(0, options.timeoutMs - spentMs),
        );
        const onAbort = (): void => fail(new Error("aborted; the search was stopped"));
        const onMessage = (found: [number, string][]): void => {
          finish();
          resolve(found.map(([line, matched]) => ({ line, text: matched })));
        };
        const onError = (error: Error): void =>
          fail(new Error(`the pattern could not be matched: ${error.message}`, { cause: error }));
        const onExit = (): void => fail(new Error("the pattern could not be matched: the search stopped"));
        options.signal.addEventListener("abort", onAbort, { once: true });
        running.on("message", onMessage);
        running.on("error", onError);
        running.on("exit", onExit);
        running.ref();
        running.postMessage({ ...compiled, text, max });
      });
    },
    close: async () => {
      const running = worker;
      worker = undefined;
      if (running !== undefined) await giveBack(running);
    },
  };
}

// One worker kept between searches (starting one costs tens of milliseconds); a search that
// is stopped terminates its worker, and the next one starts afresh. An idle worker does not
// keep the process alive.
let idle: Worker | undefined;

async function takeWorker(): Promise<Worker> {
  const taken = idle ?? (await startWorker());
  idle = undefined;
  return taken;
}

async function giveBack(worker: Worker): Promise<void> {
  if (idle !== undefined) {
    await worker.terminate();
    return;
  }
  worker.unref();
  idle = worker;
}

// Loaded on the first search: most runs never grep, and the CLI starts faster without it.
async function startWorker(): Promise<Worker> {
  const { Worker } = await import("node:worker_threads");
  const worker = new Worker(workerSource, {
    eval: true,
    // A pattern may also try to exhaust memory; the worker's heap is bounded, not the CLI's.
    resourceLimits: { maxOldGenerationSizeMb: 128 },
    stdout: true,
    stderr: true,
  });
  worker.on("exit", () => {
    if (idle === worker) idle = undefined;
  });
  // A worker that fails while idle is dropped; the next search starts a new one.
  worker.on("error", () => undefined);
  return worker;
}

// Plain JavaScript run by the worker (eval): no file to find next to this one, in src or dist.
const workerSource = String.raw`
const { parentPort } = require("node:worker_threads");
let compiled;
parentPort.on("message", ({ source, flags, text, max }) => {
  if (compiled === undefined || compiled.source !== source || compiled.flags !== flags) compiled = new RegExp(source, flags);
  const found = [];
  let line = 1;
  for (let start = 0; start <= text.length && found.length < max; line++) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    let content = text.slice(start, end);
    if (content.endsWith("\r")) content = content.slice(0, -1);
    if (compiled.test(content)) found.push([line, content.length > 300 ? content.slice(0, 300) + "…" : content]);
    start = end + 1;
  }
  parentPort.postMessage(found);
});
`;
