import { errorMessage } from "../errors.ts";
import {
  checkApprovalPolicy,
  type ApprovalPolicy,
  type ApprovalRule,
  type AskHuman,
} from "../tools/approval-policy.ts";
import { CliError } from "./cli-error.ts";
import type { PermissionMode } from "./permission-mode.ts";
import { modePolicy, readPolicyFile } from "./policy-presets.ts";

/**
 * The approval policy of a CLI process, which every task runs with: one object whose rules follow
 * the mode and grow with each "always" answer, until the session in use changes (the loop reads a
 * policy's rules at each call).
 */
export type CliPolicy = {
  readonly policy: ApprovalPolicy;
  /** The rules become the new mode's (Shift-Tab, an accepted plan); the added ones stay. */
  setMode: (mode: PermissionMode) => void;
  /** An "always" answer: `name` is allowed for the rest of this session (rule `always:<name>`). */
  allowAlways: (name: string) => void;
  /** Another session is in use now (`/clear`, `/resume`): the "always" answers given in the last one no longer hold. */
  forgetAlways: () => void;
};

/** What the CLI's policy is made of: the mode, the flags, the sandbox, the `--policy` file, who is asked. */
export type CliPolicyOptions = {
  mode: PermissionMode;
  /** `--yes` (`all`) or the names of `--allow`. */
  allow: "all" | readonly string[];
  /** `--policy <file.json>`: its rules are added. */
  file?: string;
  /** Tools plan mode denies besides write, edit and bash: the MCP tools in use. */
  planDenies?: readonly string[];
  /**
   * Why bash runs unconfined (the sandbox it wanted cannot run), or `undefined`: then each bash
   * command is asked about whatever allows it (denied without a terminal, saying how to go on).
   */
  unsandboxed?: string;
  /**
   * The terminal's prompt, made for this policy (it adds the "always" rules), or `"deny"` when
   * there is no one to ask (`--json`, no terminal).
   */
  human: ((policy: CliPolicy) => AskHuman) | "deny";
};

/**
 * The policy of a CLI run, its rules in this order: the mode's preset (`modePolicy`), `--yes` or
 * `--allow` as allow rules (ids `--yes`, `--allow`), the unsandboxed bash's ask (a deny without a
 * terminal, id `no-sandbox`), the rules of the `--policy` file, then those "always" added. Rules
 * decide deny over ask over allow, so no flag, file or "always" allows what a preset asks about.
 * A malformed file is a `CliError` (exit 1) naming the file, the rule and the field.
 */
export function cliPolicy(options: CliPolicyOptions): CliPolicy {
  const fixed = fixedRules(options);
  const added: ApprovalRule[] = [];
  const rulesOf = (mode: PermissionMode): ApprovalRule[] => [
    ...(modePolicy(mode, options.planDenies).rules ?? []),
    ...fixed,
    ...added,
  ];
  const policy: ApprovalPolicy = { rules: rulesOf(options.mode), human: "deny" };
  try {
    checkApprovalPolicy(policy, "policy");
  } catch (error) {
    // A file's rule may take an id the CLI's rules have.
    throw new CliError(`--policy ${options.file ?? "(none)"}: ${errorMessage(error)}`);
  }
  let mode = options.mode;
  const cli: CliPolicy = {
    policy,
    setMode: (next) => {
      mode = next;
      policy.rules = rulesOf(mode);
    },
    allowAlways: (name) => {
      const id = `always:${name}`;
      if (added.some((rule) => rule.id === id)) return;
      added.push({
        id,
        tool: name,
        action: "allow",
        reason: `the user answered "always" for ${name} in this session`,
      });
      policy.rules = rulesOf(mode);
    },
    forgetAlways: () => {
      if (added.length === 0) return;
      added.length = 0;
      policy.rules = rulesOf(mode);
    },
  };
  if (options.human !== "deny") policy.human = options.human(cli);
  return cli;
}

function fixedRules(options: CliPolicyOptions): ApprovalRule[] {
  const rules: ApprovalRule[] = [];
  if (options.allow === "all") rules.push({ id: "--yes", tool: "*", action: "allow" });
  else if (options.allow.length > 0) rules.push({ id: "--allow", tool: [...options.allow], action: "allow" });
  if (options.unsandboxed !== undefined)
    rules.push(
      options.human === "deny"
        ? {
            id: "no-sandbox",
            tool: "bash",
            action: "deny",
            reason: `bash cannot run: there is no sandbox for it here: ${options.unsandboxed}. So each command must be asked about, and there is no terminal to ask on. Run the CLI with --sandbox off to let bash commands run unconfined, with the user's rights (or install bubblewrap)`,
          }
        : {
            id: "no-sandbox",
            tool: "bash",
            action: "ask",
            reason: `bash has no sandbox here: ${options.unsandboxed}. Every command is asked about and runs with your rights; --sandbox off runs them unasked`,
          },
    );
  if (options.file !== undefined) rules.push(...readPolicyFile(options.file, "error"));
  return rules;
}
