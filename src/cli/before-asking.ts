import type { AgentHooks } from "../loop/hooks.ts";
import type { JsonObject, ToolCallMessage } from "../session.ts";
import type { ApprovalPolicy } from "../tools/approval-policy.ts";
import { matchPolicy } from "../tools/match-policy.ts";
import type { AskingOrder } from "./asking-order.ts";

/** What the CLI checks before its policy decides a call (see `beforeAsking`). */
export type BeforeAskingOptions = {
  policy: ApprovalPolicy;
  /** Whether a human can be asked (a terminal, not `--json`). */
  terminal: boolean;
  /**
   * Why a call writes where code runs from (`protectedTargets`): asked every time, whatever the
   * rules allow. Must not throw.
   */
  everyTime: (call: { name: string; input: JsonObject }) => Promise<string | undefined>;
  /** The error a call would get if it ran now (`checkToolCall`), or `undefined`. Must not throw. */
  check: (call: { name: string; input: JsonObject }) => Promise<string | undefined>;
  /** Where the hook notes why a call it sends to the human is asked every time (the prompt shows it, without "always"). */
  noted: WeakMap<ToolCallMessage, string>;
  /**
   * The line calls for the human wait in (on a terminal): a call is checked once the calls before
   * it have ended. Its owner lets a call leave when its result is made (`afterToolCall`).
   */
  order?: AskingOrder;
};

/**
 * The CLI's checks that a rule cannot express, run before the policy's chain (as its
 * `beforeToolCall` hook, whose deny is recorded `{ by: "hook" }`): a write where code runs from
 * (`everyTime`: found by resolving the path, links and git's places) goes to the human whatever
 * the rules allow (`requireApproval`), or is denied when there is no one to ask; a call the
 * human would be asked about that cannot succeed (`check`: an edit whose `oldText` is not there)
 * is denied with that error instead of being shown; it is checked in its turn (`order`), once the
 * calls sent to the human before it were answered and ran. A call the rules deny is left to them.
 */
export function beforeAsking(options: BeforeAskingOptions): NonNullable<AgentHooks["beforeToolCall"]> {
  return async ({ call, caller }) => {
    const action = matchPolicy(options.policy, call)?.action;
    if (action === "deny") return undefined;
    // In line before anything is awaited: parallel calls take their places in call order.
    const place = options.terminal ? options.order?.enter(call, caller) : undefined;
    const everyTime = await options.everyTime(call);
    if (everyTime === undefined && action === "allow") {
      place?.leave();
      return undefined;
    }
    if (!options.terminal)
      return everyTime === undefined ? undefined : { deny: `${everyTime}; there is no terminal to ask on` };
    await place?.ready();
    const failure = await options.check(call);
    if (failure !== undefined) return { deny: `not asked, since the call would fail: ${failure}` };
    if (everyTime === undefined) return undefined;
    options.noted.set(call, everyTime);
    return { requireApproval: true };
  };
}
