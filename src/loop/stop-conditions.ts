import { isToolCall, type ModelMessage, type Session, type ToolCallMessage } from "../session.ts";
import { AgentError, describeValue } from "../errors.ts";
import { sameToolCall } from "../tools/loop-guard.ts";

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
    let last: ToolCallMessage | undefined;
    for (let index = session.messages.length - 1; index >= 0 && count < limit; index--) {
      const message = session.messages[index]!;
      if (!isToolCall(message)) continue;
      if (last !== undefined && !sameToolCall(message, last)) break;
      last = message;
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
