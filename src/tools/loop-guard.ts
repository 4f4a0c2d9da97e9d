import type { ToolCallMessage, ToolResultMessage } from "../session.ts";
import { sameJson } from "./same-json.ts";
import { deniedResult } from "./tool-errors.ts";

/** The loop guard of a run: how many identical calls in a row may run, and what it saw so far. */
export type LoopGuard = { readonly limit: number; readonly state: LoopGuardState };

/** What the loop guard saw of a run: the last call, how many identical calls in a row, the refused ones. */
export type LoopGuardState = {
  last: ToolCallMessage | undefined;
  count: number;
  refused: number;
  /** Set once a refused call is repeated again: the loop ends the run (`loop-detected`) once the turn is answered. */
  detected: ToolCallMessage | undefined;
};

export function newLoopGuardState(): LoopGuardState {
  return { last: undefined, count: 0, refused: 0, detected: undefined };
}

/**
 * Counts `call` (in call order, across turns) and refuses it when `limit` identical calls in a row
 * ran already (same tool, same input: `sameToolCall`), with a result telling the model to change
 * course; one more after that marks the run as looping (`state.detected`). Synchronous, and part
 * of no gate: a call it lets through stays ungated.
 */
export function checkLoopGuard({ limit, state }: LoopGuard, call: ToolCallMessage): ToolResultMessage | undefined {
  if (state.last !== undefined && sameToolCall(call, state.last)) state.count++;
  else {
    state.count = 1;
    state.refused = 0;
  }
  state.last = call;
  if (state.count <= limit) return undefined;
  state.refused++;
  if (state.refused > 1) state.detected = call;
  return deniedResult(
    call,
    `you are repeating yourself: this exact call (${call.name} with the same input) ran ${limit} times ` +
      "in a row already. It will not run again; change course.",
  );
}

/** Same tool and deep-equal input (objects' keys in any order), compared in place: the first difference ends it. */
export function sameToolCall(call: ToolCallMessage, other: ToolCallMessage): boolean {
  return call.name === other.name && sameJson(call.input, other.input);
}
