import type { Message, ModelMessage, Session } from "../session.ts";
import type { ToolSchema } from "../tools/tool.ts";
import type { ToolHooks } from "../tools/tool-hooks.ts";
import type { ModelSettings } from "../model/model-settings.ts";

/**
 * Plain optional functions called at fixed points of the loop; a returned value overrides the
 * loop's default, `undefined` keeps it. They may be async.
 */
export type AgentHooks = ToolHooks & {
  /**
   * Before each model call. May replace, for this call only, the messages the model sees (the
   * session itself is untouched), the tools, or `settings` (merged over the run's `settings`
   * and passed to `invokeModel` as `context.settings`). Throwing ends the run with that error; nothing of the turn is added.
   */
  beforeModelCall?: (input: { session: Session; tools: ToolSchema[]; iteration: number }) => Awaitable<void | {
    messages?: Message[];
    tools?: ToolSchema[];
    settings?: ModelSettings;
  }>;
  /** After each model call, before its messages enter the session. May replace them. Throwing ends the run. */
  afterModelCall?: (input: {
    session: Session;
    messages: ModelMessage[];
    iteration: number;
  }) => Awaitable<void | { messages?: ModelMessage[] }>;
};

type Awaitable<T> = T | Promise<T>;
