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
};
