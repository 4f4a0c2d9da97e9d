import type { AgentHooks } from "../hooks.ts";
import type { JsonObject } from "../session.ts";
import { serialQueue } from "./serial-queue.ts";

/** The user's answer to a permission prompt. */
export type PermissionDecision = { type: "allow-once" } | { type: "allow-always" } | { type: "deny"; reason: string };

/** Asks the user about one tool call; `signal` aborts when the task is interrupted (the prompt should go away then). */
export type AskPermission = (request: { name: string; input: JsonObject }, signal: AbortSignal) => Promise<PermissionDecision>;

export type PermissionOptions = {
  /** The tools that need permission (write, edit, bash, MCP tools); the others run freely. */
  guarded: ReadonlySet<string>;
  /** Tools allowed from the start: `all` (`--yes`) or names (`--allow`). */
  allowed: "all" | ReadonlySet<string>;
  /** How to ask; absent when there is no terminal to ask on (`--json`, or stdin is not a TTY). */
  ask?: AskPermission;
  /** The signal of the task running now. */
  signal: () => AbortSignal;
};

/**
 * The `beforeToolCall` hook that enforces the CLI's permissions. A guarded tool runs when the
 * flags allow it or the user said "always" for it earlier in this run; otherwise the user is
 * asked, one prompt at a time (a call waiting behind a prompt is asked about only if the answer
 * did not already allow its tool). A deny becomes the call's error result, with the user's
 * reason for the model. Without a way to ask, guarded calls are denied with a message naming
 * the flag that allows them.
 */
export function permissionHook(options: PermissionOptions): NonNullable<AgentHooks["beforeToolCall"]> {
  const always = new Set<string>();
  const prompts = serialQueue();
  const isAllowed = (name: string): boolean => !options.guarded.has(name) || options.allowed === "all" || options.allowed.has(name) || always.has(name);
  return async ({ call }) => {
    if (isAllowed(call.name)) return undefined;
    const ask = options.ask;
    if (ask === undefined) {
      return { deny: `${call.name} needs the user's permission and there is no terminal to ask; run with --allow ${call.name} (or --yes to allow every tool)` };
    }
    return prompts(async () => {
      if (isAllowed(call.name)) return undefined;
      const signal = options.signal();
      if (signal.aborted) return { deny: "the task was interrupted" };
      const decision = await ask({ name: call.name, input: call.input }, signal);
      if (decision.type === "allow-always") always.add(call.name);
      if (decision.type !== "deny") return undefined;
      const reason = decision.reason.trim();
      return { deny: reason === "" ? "the user denied this call (no reason given)" : `the user denied this call: ${reason}` };
    });
  };
}
