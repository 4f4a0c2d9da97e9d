import { errorMessage, isProviderError } from "../errors.ts";
import type { JsonObject } from "../session.ts";
import { unknownUsageCalls, type TaskOutput, type TaskResult } from "./task-output.ts";

/**
 * A task as JSON Lines on `out`, for scripts: every agent event as it happens, then exactly one
 * last line, `{"type":"done",...}` (outcome `done`) or `{"type":"error",...}` (anything else,
 * with a message; `status` for an HTTP error of the provider). Nothing else is written to `out`.
 */
export function jsonOutput(out: NodeJS.WritableStream, details: JsonObject): TaskOutput {
  const line = (value: unknown): void => void out.write(`${JSON.stringify(value)}\n`);
  return {
    event: line,
    finish: (result: TaskResult) => {
      const common = {
        ...details,
        outcome: result.outcome,
        ...(result.metrics === undefined
          ? {}
          : { usage: result.metrics.usage, usageComplete: unknownUsageCalls(result.metrics) === 0, durationMs: result.metrics.durationMs }),
        ...(result.waitMs === undefined ? {} : { waitMs: result.waitMs }),
      };
      if (result.outcome === "done") {
        line({ type: "done", ...common, answer: result.answer ?? "" });
        return;
      }
      const error = result.error;
      const message = error !== undefined ? errorMessage(error) : result.outcome === "aborted" ? "interrupted" : `the run ended: ${result.outcome}`;
      line({ type: "error", ...common, message, ...(isProviderError(error) && error.status !== undefined ? { status: error.status } : {}) });
    },
    interrupting: () => undefined,
    pause: () => undefined,
    resume: () => undefined,
  };
}
