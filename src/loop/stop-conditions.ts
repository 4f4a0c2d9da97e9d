import { isToolCall, type ModelMessage, type Session, type ToolCallMessage } from "../session.ts";
import { AgentError, describeValue } from "../errors.ts";
import type { AgentHooks } from "./hooks.ts";

/** What `stopWhen` is shown after each turn's tool results are in. */
export type StopConditionState = { session: Session; iteration: number; turn: ModelMessage[] };

/** True ends the run with outcome `stop-condition`, every call answered, no throw. */
export type StopCondition = (state: StopConditionState) => boolean | Promise<boolean>;

/** A stop condition: the turn called the tool named `name`. */
export function hasToolCall(name: string): StopCondition {
  return ({ turn }) => turn.some((message) => isToolCall(message) && message.name === name);
}

/** A stop condition: `n` model calls were made in this run. */
export function stepCountIs(n: number): StopCondition {
  return ({ iteration }) => iteration >= n;
}

/**
 * A stop condition: the last `limit` tool calls of the session (in call order, across turns) were
 * the same tool with the same input.
 */
export function repeatedToolCalls(limit: number): StopCondition {
  return ({ session }) => {
    let count = 0;
    let last: string | undefined;
    for (let index = session.messages.length - 1; index >= 0 && count < limit; index--) {
      const message = session.messages[index]!;
      if (!isToolCall(message)) continue;
      const key = callKey(message);
      if (last !== undefined && key !== last) break;
      last = key;
      count++;
    }
    return count >= limit;
  };
}

/** `loopGuard` as the loop reads it: the number of identical calls in a row that may run. */
export function loopGuardLimit(option: false | { limit?: number } | undefined): number | undefined {
  if (option === false) return undefined;
  const limit = option?.limit ?? 5;
  if (!Number.isInteger(limit) || limit < 1)
    throw new AgentError(`loopGuard.limit must be an integer >= 1; got ${describeValue(limit)}`);
  return limit;
}

/** What the loop guard saw of a run: the last call's key, how many identical calls in a row, the refused ones. */
export type LoopGuardState = {
  key: string | undefined;
  count: number;
  refused: number;
  detected: ToolCallMessage | undefined;
};

export function newLoopGuardState(): LoopGuardState {
  return { key: undefined, count: 0, refused: 0, detected: undefined };
}

/**
 * The `beforeToolCall` hook with the loop guard before it: once `limit` identical calls in a row
 * ran (same tool, same input, counted in call order across turns), the next identical one is
 * denied with a message telling the model to change course; one more after that marks the run as
 * looping (`state.detected`), and the loop ends it once the turn is answered.
 */
export function guardedHooks(
  hooks: AgentHooks | undefined,
  limit: number | undefined,
  state: LoopGuardState,
): AgentHooks | undefined {
  if (limit === undefined) return hooks;
  const userHook = hooks?.beforeToolCall;
  return {
    ...hooks,
    beforeToolCall: (input) => {
      const key = callKey(input.call);
      if (key === state.key) state.count++;
      else {
        state.key = key;
        state.count = 1;
        state.refused = 0;
      }
      if (state.count > limit) {
        state.refused++;
        if (state.refused > 1) state.detected = input.call;
        return {
          deny:
            `you are repeating yourself: this exact call (${input.call.name} with the same input) ran ${limit} times ` +
            "in a row already. It will not run again; change course.",
        };
      }
      return userHook?.(input);
    },
  };
}

// Same tool, deep-equal input: keys of objects in sorted order, so key order does not matter.
function callKey(call: ToolCallMessage): string {
  return `${call.name}\u0000${stableJson(call.input)}`;
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (typeof value === "object" && value !== null)
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key])}`)
      .join(",")}}`;
  return JSON.stringify(value) ?? "null";
}
