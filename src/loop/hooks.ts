import type {
  JsonObject,
  JsonValue,
  Message,
  ModelMessage,
  Session,
  ToolCallMessage,
  ToolResultMessage,
} from "../session.ts";
import type { ToolSchema } from "../tools/tool.ts";
import type { ToolContent } from "../tools/tool-content.ts";

/**
 * Plain optional functions called at fixed points of the loop; a returned value overrides the
 * loop's default, `undefined` keeps it. They may be async.
 */
export type AgentHooks = {
  /**
   * Before each model call. May replace, for this call only, the messages the model sees (the
   * session itself is untouched), the tools, or `settings` (passed to `invokeModel` as
   * `context.settings`). Throwing ends the run with that error; nothing of the turn is added.
   */
  beforeModelCall?: (input: { session: Session; tools: ToolSchema[]; iteration: number }) => Awaitable<void | {
    messages?: Message[];
    tools?: ToolSchema[];
    settings?: JsonObject;
  }>;
  /** After each model call, before its messages enter the session. May replace them. Throwing ends the run. */
  afterModelCall?: (input: {
    session: Session;
    messages: ModelMessage[];
    iteration: number;
  }) => Awaitable<void | { messages?: ModelMessage[] }>;
  /**
   * Before each tool call runs (after the model asked for it). `{ deny: reason }` answers it with
   * an error result instead; `{ requireApproval: true }` pauses the run until `resolveApproval`.
   * Throwing denies the call (fail closed) and is reported as a `hook-error` event.
   */
  beforeToolCall?: (input: {
    call: ToolCallMessage;
    session: Session;
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
