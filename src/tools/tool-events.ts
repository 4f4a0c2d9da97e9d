import type { ConsultedLink, DecidedBy, JsonObject, JsonValue, ToolResultMessage } from "../session.ts";

/**
 * The events of one tool call's execution, in the order a call has them (each a part of the loop's
 * `AgentEvent`). `caller`: set on the calls a code-mode program started, the id of its code call
 * (`run_code`); a program's call `id` is `<caller>.<n>`.
 */
export type ToolExecutionEvent =
  /** A tool call's execution began (input validation, then the handler); every answered call has one. */
  | { type: "tool-execution-start"; id: string; name: string; input: JsonObject; caller?: string }
  /** A tool call needs a human's approval: the run will pause (outcome `paused`) once the turn's other calls are done. */
  | { type: "tool-approval-request"; id: string; name: string; input: JsonObject; caller?: string }
  /**
   * A tool call was decided (approved or denied) by a link of the approval chain: a rule, a
   * classifier, a human, the `beforeToolCall` hook, the policy; `consulted`: the links asked before
   * that were not sure. The same record is on the call (`approval`).
   */
  | {
      type: "tool-approval";
      id: string;
      name: string;
      status: "approved" | "denied";
      decidedBy: DecidedBy;
      consulted?: ConsultedLink[];
      caller?: string;
    }
  /** A running tool reported progress through `context.update`. */
  | { type: "tool-execution-update"; id: string; name: string; progress: JsonValue; caller?: string }
  /**
   * A tool call is answered; `result` is what enters the session, in call order. `waitMs`: time
   * in the `beforeToolCall` hook (waiting for the user's permission, say); `durationMs`: the
   * rest, validation and handler. Both in milliseconds to 0.1 ms.
   */
  | {
      type: "tool-execution-end";
      id: string;
      name: string;
      result: ToolResultMessage;
      durationMs: number;
      waitMs: number;
      caller?: string;
    };

/** What the executor reports: its calls' events, and a tool hook that threw (the call is denied: fail closed). */
export type ToolEvent =
  ToolExecutionEvent | { type: "hook-error"; hook: "beforeToolCall" | "afterToolCall"; id: string; error: string };
