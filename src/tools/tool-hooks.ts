import type { JsonValue, Session, ToolCallMessage, ToolResultMessage } from "../session.ts";
import type { ToolContent } from "./tool-content.ts";

/** The hooks around each tool call (a part of the loop's `AgentHooks`): plain optional functions; they may be async. */
export type ToolHooks = {
  /**
   * Before each tool call runs (after the model asked for it). `{ deny: reason }` answers it with
   * an error result instead; `{ requireApproval: true }` pauses the run until `resolveApproval`.
   * Throwing denies the call (fail closed) and is reported as a `hook-error` event.
   */
  beforeToolCall?: (input: {
    call: ToolCallMessage;
    session: Session;
    /** Set for a call a code-mode program made: the id of its code call (`run_code`), whose input holds the program. */
    caller?: string;
  }) => Awaitable<void | { deny: string } | { requireApproval: true }>;
  /**
   * After each tool call, before its result enters the session. May replace the output: return
   * `{ output, isError? }`, rich content (`toolContent(parts)`), or the new output itself (a string or JSON value). Throwing replaces the result with an error (fail closed), reported as `hook-error`.
   */
  afterToolCall?: (input: { call: ToolCallMessage; result: ToolResultMessage; session: Session }) => Awaitable<
    | void
    | JsonValue
    | ToolContent
    | {
        output: JsonValue;
        isError?: boolean;
      }
  >;
};

type Awaitable<T> = T | Promise<T>;
