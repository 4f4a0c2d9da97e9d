import { errorMessage, isProviderError } from "../errors.ts";
import type { AgentEvent } from "../loop/events.ts";
import type { JsonObject } from "../session.ts";
import { unknownUsageCalls, type TaskOutput, type TaskResult } from "./task-output.ts";
import { visibleJson } from "./visible-text.ts";

/**
 * A task as JSON Lines on `out`, for scripts: every agent event as it happens, then exactly one
 * last line, `{"type":"done",...}` (outcome `done`) or `{"type":"error",...}` (anything else,
 * with a message; `status` for an HTTP error of the provider). Nothing else is written to `out`.
 * Lines are written with `visibleJson`: a terminal showing them is never acted on.
 * Durations (`durationMs`, `delayMs`, `waitMs`, the run's metrics) are whole milliseconds.
 */
export function jsonOutput(out: NodeJS.WritableStream, details: JsonObject): TaskOutput {
  const line = (value: unknown): void => void out.write(`${visibleJson(value)}\n`);
  return {
    event: (event) => line(withWholeMilliseconds(event)),
    finish: (result: TaskResult) => {
      const common = {
        ...details,
        outcome: result.outcome,
        ...(result.metrics === undefined
          ? {}
          : {
              usage: result.metrics.usage,
              usageComplete: unknownUsageCalls(result.metrics) === 0,
              durationMs: Math.round(result.metrics.durationMs),
            }),
        ...(result.waitMs === undefined ? {} : { waitMs: Math.round(result.waitMs) }),
      };
      if (result.outcome === "done") {
        line({ type: "done", ...common, answer: result.answer ?? "" });
        return;
      }
      const error = result.error;
      const message =
        error !== undefined
          ? errorMessage(error)
          : result.outcome === "aborted"
            ? "interrupted"
            : `the run ended: ${result.outcome}`;
      line({
        type: "error",
        ...common,
        message,
        ...(isProviderError(error) && error.status !== undefined ? { status: error.status } : {}),
      });
    },
    interrupting: () => undefined,
    pause: () => undefined,
    resume: () => undefined,
  };
}

// Timings measured with performance.now() are fractions (1.1829629999999725) that only add
// noise for scripts. Only the event's own fields and its metrics are ours to round: a tool's
// input and result are data, whatever their keys.
function withWholeMilliseconds(event: AgentEvent): Record<string, unknown> {
  const rounded: Record<string, unknown> = { ...event };
  for (const [key, value] of Object.entries(rounded)) {
    if (key.endsWith("Ms") && typeof value === "number") rounded[key] = Math.round(value);
    else if (key === "metrics") rounded[key] = roundedMilliseconds(value);
  }
  return rounded;
}

function roundedMilliseconds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(roundedMilliseconds);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, field]) => [
      key,
      key.endsWith("Ms") && typeof field === "number" ? Math.round(field) : roundedMilliseconds(field),
    ]),
  );
}
