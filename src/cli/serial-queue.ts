/** Runs the tasks given to it one at a time, in the order they came; each call resolves with its task's result. */
export type SerialQueue = <T>(task: () => Promise<T>) => Promise<T>;

/**
 * A queue of one: a task starts once every task queued before it has settled (a failure does not
 * stop the ones after it). The CLI serializes file writes and permission prompts with it, so
 * parallel tool calls never interleave a read-modify-write or two questions on one terminal.
 */
export function serialQueue(): SerialQueue {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>): Promise<T> => {
    const run = tail.then(task, task);
    tail = run.catch(() => undefined);
    return run;
  };
}
