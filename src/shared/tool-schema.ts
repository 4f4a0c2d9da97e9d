import type { JsonObject } from "../session.ts";

/**
 * A tool as the model sees it: a name, a description and a JSON Schema for its
 * input. Extra provider fields (e.g. `cache_control`) are passed through to `invokeModel` as they are.
 */
export type ToolSchema = {
  name: string;
  description: string;
  input_schema: JsonObject;
  /** Loop-only: see `Tool.eager`. Removed before the schema reaches the model. */
  eager?: boolean;
  /** Loop-only: every call of this tool waits for a human's approval (the run pauses; see `resolveApproval`). */
  requireApproval?: boolean;
  /**
   * Loop-only: not sent to the model until a `search_tools` call loads it (the loop adds that tool
   * while any is deferred); a call before that is answered with an error that says to search first.
   */
  deferred?: boolean;
  /** Loop-only: calls of this tool run as background tasks (see `BackgroundOption`). Removed before the schema reaches the model. */
  background?: BackgroundOption;
};

/**
 * A tool's `background` option: its calls become background tasks, answered at once while the
 * handler goes on. `true` means `{ when: "always" }`. `when: "asked"`: the model is shown an extra
 * optional boolean input `run_in_background`, and only a call with it `true` is a task (the
 * property is removed before validation; the handler never sees it). `onRestart`: what a later run
 * does with a task the log says runs but no process holds (a crash): `"rerun"` starts the handler
 * again with the same input and task id, `"lost"` (the default, safe for side effects) records it lost.
 */
export type BackgroundOption = boolean | { when?: "always" | "asked"; onRestart?: "rerun" | "lost" };
