import type { AgentHooks } from "../loop/hooks.ts";
import type { JsonObject } from "../session.ts";
import type { PermissionMode } from "./permission-mode.ts";
import { planToolName } from "./plan-tool.ts";
import { serialQueue } from "./serial-queue.ts";
import { readOnlyTools } from "./tools/index.ts";

/** The user's answer to a permission prompt. */
export type PermissionDecision = { type: "allow-once" } | { type: "allow-always" } | { type: "deny"; reason: string };

/**
 * What a prompt asks about: the tool and its input. `alwaysAsk`, when set, says why this call is
 * asked whatever was allowed before (it writes where code runs from); "always" must not be
 * offered for it, and answering it allows this call only.
 */
export type PermissionRequest = { name: string; input: JsonObject; alwaysAsk?: string };

/** Asks the user about one tool call; `signal` aborts when the task is interrupted (the prompt should go away then). */
export type AskPermission = (request: PermissionRequest, signal: AbortSignal) => Promise<PermissionDecision>;

export type PermissionOptions = {
  /** The tools that need permission (write, edit, bash, MCP tools); the others run freely. */
  guarded: ReadonlySet<string>;
  /** Tools allowed from the start: `all` (`--yes`) or names (`--allow`). */
  allowed: "all" | ReadonlySet<string>;
  /** How to ask; absent when there is no terminal to ask on (`--json`, or stdin is not a TTY). */
  ask?: AskPermission;
  /** The signal of the task running now. */
  signal: () => AbortSignal;
  /**
   * Why a call must be asked about every time, or `undefined` for an ordinary call (see
   * `protectedTargets`). Such a call is asked even when a flag or an "always" allows its tool,
   * and denied with this reason when there is no terminal. Must not throw.
   */
  alwaysAsk?: (call: { name: string; input: JsonObject }) => Promise<string | undefined>;
  /**
   * The error a call would get if it ran now (an `edit` whose `oldText` does not match), or
   * `undefined`. Checked before asking: a call that cannot succeed is answered with that error
   * and never shown to the user. Must not throw.
   */
  check?: (call: { name: string; input: JsonObject }) => Promise<string | undefined>;
  /**
   * The permission mode, read at each call (Shift-Tab and an accepted plan change it): `yolo`
   * allows every guarded tool as `--yes` does, `accept-edits` the tools in `edits`, `plan` none
   * (they are denied, telling the model to propose its plan). Default: `default`.
   */
  mode?: () => PermissionMode;
  /** The tools `accept-edits` allows: default `write` and `edit`. */
  edits?: ReadonlySet<string>;
};

/**
 * The tools of `names` that need permission: all but the read-only ones (`readOnlyTools`) and
 * `propose_plan`, which only shows a plan. MCP tools are guarded whatever they do.
 */
export function guardedTools(names: readonly string[]): Set<string> {
  return new Set(names.filter((name) => !readOnlyTools.has(name) && name !== planToolName));
}

/** The tools `accept-edits` runs without asking. */
export const editTools: ReadonlySet<string> = new Set(["write", "edit"]);

/**
 * The `beforeToolCall` hook that enforces the CLI's permissions. A guarded tool runs when the
 * flags allow it or the user said "always" for it earlier in this run; otherwise the user is
 * asked, one prompt at a time (a call waiting behind a prompt is asked about only if the answer
 * did not already allow its tool). A call that writes where code runs from (`alwaysAsk`) is
 * asked every time, whatever was allowed. A call that would fail (`check`) is not asked about:
 * it is denied with its error. A deny becomes the call's error result, with the user's reason for
 * the model. Without a way to ask, guarded calls are denied with a message naming the flag that
 * allows them.
 */
export function permissionHook(options: PermissionOptions): NonNullable<AgentHooks["beforeToolCall"]> {
  const always = new Set<string>();
  const prompts = serialQueue();
  const edits = options.edits ?? editTools;
  const mode = (): PermissionMode => options.mode?.() ?? "default";
  const isAllowed = (name: string): boolean =>
    !options.guarded.has(name) ||
    options.allowed === "all" ||
    options.allowed.has(name) ||
    always.has(name) ||
    mode() === "yolo" ||
    (mode() === "accept-edits" && edits.has(name));
  const planned = (name: string): { deny: string } | undefined =>
    mode() === "plan" && options.guarded.has(name)
      ? {
          deny: `plan mode: only the read-only tools run until the user accepts a plan. Do not change anything yet: look with the read-only tools, then call propose_plan with your plan and wait for the user's answer (${name} was not run)`,
        }
      : undefined;
  return async ({ call }) => {
    const inPlan = planned(call.name);
    if (inPlan !== undefined) return inPlan;
    const request = { name: call.name, input: call.input };
    const alwaysAsk = options.guarded.has(call.name) ? await options.alwaysAsk?.(request) : undefined;
    if (alwaysAsk === undefined && isAllowed(call.name)) return undefined;
    const ask = options.ask;
    if (ask === undefined) {
      if (alwaysAsk !== undefined)
        return { deny: `${alwaysAsk}; there is no terminal to ask on, and no flag allows it` };
      return {
        deny: `${call.name} needs the user's permission and there is no terminal to ask; run with --allow ${call.name} (or --yes to allow every tool)`,
      };
    }
    return prompts(async () => {
      // The mode may have changed while this call waited behind a prompt.
      const nowInPlan = planned(call.name);
      if (nowInPlan !== undefined) return nowInPlan;
      if (alwaysAsk === undefined && isAllowed(call.name)) return undefined;
      const signal = options.signal();
      if (signal.aborted) return { deny: "the task was interrupted" };
      // Checked in the queue: calls answered before this one may have changed what it would do.
      const failure = await options.check?.(request);
      if (failure !== undefined) return { deny: `not asked, since the call would fail: ${failure}` };
      const decision = await ask(alwaysAsk === undefined ? request : { ...request, alwaysAsk }, signal);
      if (decision.type === "allow-always" && alwaysAsk === undefined) always.add(call.name);
      if (decision.type !== "deny") return undefined;
      const reason = decision.reason.trim();
      return {
        deny: reason === "" ? "the user denied this call (no reason given)" : `the user denied this call: ${reason}`,
      };
    });
  };
}
