import type { Message } from "../session.ts";

/**
 * The time the messages of a durable run are stamped with (`ts`), the same on every replay: it
 * moves only with times read inside journaled steps. A model turn's messages carry the end of
 * their step; a tool result the end of its tool's step, or later if an earlier result entered
 * after it (results enter in call order); anything else (a user message, a denied or aborted
 * result, the `aborted` message, approval updates) the latest journaled time before it. A
 * decision recorded on a call (`approval.at`) is stamped the same way, so a replay records it alike.
 */
export type ReplayClock = {
  /** The current time as ISO-8601 UTC. */
  now: () => string;
  /** Moves the clock to `ms` (a journaled time), never back. */
  advance: (ms: number) => void;
  /** Records when the step of tool call `id` ended (a journaled time). */
  toolEnded: (id: string, ms: number) => void;
  /** Sets `ts` on a message as it enters the session: the clock, moved to its tool's end first. */
  stamp: (message: Message) => void;
  /** Sets `approval.at` on a call whose decision was just recorded: the clock. */
  stampApproval: (message: Message) => void;
};

export function createReplayClock(startMs: number): ReplayClock {
  let current = startMs;
  const toolEnds = new Map<string, number>();
  const advance = (ms: number): void => {
    if (ms > current) current = ms;
  };
  const now = (): string => new Date(current).toISOString();
  return {
    now,
    advance,
    toolEnded: (id, ms) => void toolEnds.set(id, ms),
    stamp: (message) => {
      if ("type" in message && message.type === "tool_result") {
        const ended = toolEnds.get(message.id);
        if (ended !== undefined) advance(ended);
      }
      message.ts = now();
    },
    stampApproval: (message) => {
      if ("type" in message && message.type === "tool_call" && message.approval?.at !== undefined)
        message.approval.at = now();
    },
  };
}
