import type { ToolCallMessage } from "../session.ts";

/**
 * The line the CLI's calls for the prompt wait in: a call headed for the human is checked (would
 * it fail?) and asked about once every call that entered the line before it has ended (answered
 * and run, or denied), so an edit whose text a parallel edit before it creates is checked against
 * the file that edit wrote. A program's calls (`caller`, its code call's id) wait only for the
 * calls of the same program: its code call may itself hold a place until the program ends.
 */
export type AskingOrder = {
  /** Takes the call's place, in the order calls come (synchronous: call it before any await). */
  enter: (call: ToolCallMessage, caller: string | undefined) => AskingPlace;
  /** The call ended (its result is made): the calls after it may go on. Idempotent. */
  leave: (call: ToolCallMessage) => void;
  /** The run ended: no call holds another up any more. */
  clear: () => void;
};

/** One call's place in the line. */
export type AskingPlace = {
  /** Resolves once every call that entered before this one (of the same program) has left. */
  ready: () => Promise<void>;
  /** Leaves early: the call is not asked about after all (a rule allows it). */
  leave: () => void;
};

type Entry = {
  call: ToolCallMessage;
  caller: string | undefined;
  left: Promise<void>;
  leave: () => void;
};

/** A new, empty line (one per CLI process: its runs do not overlap). */
export function askingOrder(): AskingOrder {
  const line: Entry[] = [];
  const remove = (entry: Entry): void => {
    const index = line.indexOf(entry);
    if (index !== -1) line.splice(index, 1);
    entry.leave();
  };
  return {
    enter: (call, caller) => {
      let leave: () => void = () => undefined;
      const left = new Promise<void>((resolve) => (leave = resolve));
      const entry: Entry = { call, caller, left, leave };
      const before = line.filter((other) => other.caller === caller).map((other) => other.left);
      line.push(entry);
      return {
        ready: async () => {
          await Promise.all(before);
        },
        leave: () => remove(entry),
      };
    },
    leave: (call) => {
      for (const entry of line.filter((other) => other.call === call)) remove(entry);
    },
    clear: () => {
      for (const entry of line.splice(0)) entry.leave();
    },
  };
}
