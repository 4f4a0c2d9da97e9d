import type { ToolCallMessage, ToolResultMessage } from "../session.ts";
import { sameJson } from "./same-json.ts";
import { deniedResult } from "./tool-errors.ts";

/** The loop guard of a run: how many identical calls in a row may run, and where it keeps what it saw. */
export type LoopGuard = { readonly limit: number; readonly state: LoopGuardState };

/**
 * What the loop guard saw of a run: the last call, how many identical calls in a row, the refused
 * ones. Fields of the run's own state (read every turn anyway), not a record of their own.
 */
export type LoopGuardState = {
  guardLast: ToolCallMessage | undefined;
  guardCount: number;
  guardRefused: number;
  /** Set once a refused call is repeated again: the loop ends the run (`loop-detected`) once the turn is answered. */
  loopDetected: ToolCallMessage | undefined;
};

/**
 * Counts `call` (in call order, across turns) and refuses it when `limit` identical calls in a row
 * ran already (same tool, same input: `sameToolCall`), with a result telling the model to change
 * course; one more after that marks the run as looping (`state.loopDetected`). Synchronous, and
 * part of no gate: a call it lets through stays ungated.
 */
export function checkLoopGuard({ limit, state }: LoopGuard, call: ToolCallMessage): ToolResultMessage | undefined {
  const last = state.guardLast;
  if (last !== undefined && sameToolCall(call, last)) state.guardCount++;
  else {
    state.guardCount = 1;
    state.guardRefused = 0;
  }
  state.guardLast = call;
  if (state.guardCount <= limit) return undefined;
  state.guardRefused++;
  if (state.guardRefused > 1) state.loopDetected = call;
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
