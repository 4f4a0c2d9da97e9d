import { describeError } from "../errors.ts";
import type { RunContext } from "./run-context.ts";

/** A hook's answer when the run was aborted while it ran. */
export const aborted = Symbol("aborted");

/**
 * Runs a model hook, raced against the abort: `aborted` when the run was aborted meanwhile. A
 * hook that throws ends the run: its error is reported as `hook-error`, then rethrown.
 */
export async function runModelHook<T>(
  run: RunContext,
  hook: "beforeModelCall" | "afterModelCall",
  call: () => T | Promise<T>,
): Promise<T | typeof aborted> {
  try {
    return await run.abortRace.race(Promise.resolve(call()));
  } catch (error) {
    if (run.signal.aborted) return aborted;
    run.emit({ type: "hook-error", hook, error: describeError(error) });
    throw error;
  }
}
