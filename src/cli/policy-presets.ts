import { readFileSync } from "node:fs";
import { checkApprovalPolicy, type ApprovalPolicy, type ApprovalRule } from "../tools/approval-policy.ts";
import { errorMessage } from "../errors.ts";
import { jsonNestedDeeperThan, maxJsonDepth } from "../session.ts";
import { CliError } from "./cli-error.ts";
import type { PermissionMode } from "./permission-mode.ts";
import { codeModeName } from "../tools/code-mode/code-mode-option.ts";
import { planToolName } from "./plan-tool.ts";
import { readOnlyTools } from "./tools/index.ts";

/**
 * Each `--mode` as an approval policy, plain data: every mode allows the read-only tools (and
 * `propose_plan`, which only shows a plan, and `run_code`, whose program's calls are each decided
 * by the policy) and asks for writes where code runs from (`.git/`, `.simple-agent-loop/`); `plan`
 * denies write, edit and bash (and the tools of `planDenies`: the MCP tools in use), telling the
 * model to propose its plan; `accept-edits` allows write and edit; `yolo` allows every tool;
 * `default` leaves the rest to the human. The loop decides deny over ask over allow, so the asks
 * for those places hold in yolo too.
 */
export function modePolicy(mode: PermissionMode, planDenies: readonly string[] = []): ApprovalPolicy {
  const rules: ApprovalRule[] = [
    { id: "read-only", tool: [...readOnlyTools, planToolName, codeModeName], action: "allow" },
    {
      id: "code-runs-from",
      tool: ["write", "edit"],
      input: { path: { glob: ["**/.git/**", "**/.simple-agent-loop/**"] } },
      action: "ask",
      reason: "a write where code runs from",
    },
  ];
  if (mode === "plan")
    rules.push({
      id: "plan",
      tool: ["write", "edit", "bash", ...planDenies],
      action: "deny",
      reason:
        "plan mode: only the read-only tools run until the user accepts a plan. Do not change anything yet: look with the read-only tools, then call propose_plan with your plan and wait for the user's answer",
    });
  if (mode === "accept-edits") rules.push({ id: "accept-edits", tool: ["write", "edit"], action: "allow" });
  if (mode === "yolo") rules.push({ id: "yolo", tool: "*", action: "allow" });
  return { rules, human: "pause" };
}

/**
 * The policy a run uses: the mode's preset, then the rules of `--policy <file.json>` (a JSON
 * `{ rules: [...] }`), `human: "deny"` when there is no terminal to ask on. A file that cannot be
 * read or is not a policy is a usage `CliError` (exit 2) naming the problem.
 */
export function effectivePolicy(options: { mode: PermissionMode; file?: string; terminal: boolean }): ApprovalPolicy {
  const preset = modePolicy(options.mode);
  const added = options.file === undefined ? [] : readPolicyFile(options.file);
  const policy: ApprovalPolicy = {
    rules: [...(preset.rules ?? []), ...added],
    human: options.terminal ? "pause" : "deny",
  };
  try {
    checkApprovalPolicy(policy, "policy");
  } catch (error) {
    throw new CliError(`${options.file ?? "--mode"}: ${errorMessage(error)}`, "usage");
  }
  return policy;
}

/**
 * The rules of a `--policy` file: a JSON `{ rules: [...] }` (and `human`, ignored: the CLI's own
 * human decides). A file that cannot be read or is not a policy is a `CliError` naming the file
 * and the problem (the rule and field): a usage error (exit 2) by default, as the `policy` command has it.
 */
export function readPolicyFile(path: string, kind: "usage" | "error" = "usage"): ApprovalRule[] {
  let parsed: unknown;
  try {
    const text = readFileSync(path, "utf8");
    // As every file read from outside: too deep is refused before anything is built from it.
    if (jsonNestedDeeperThan(text)) throw new Error(`nested more than ${maxJsonDepth} levels deep`);
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CliError(`--policy ${path}: ${errorMessage(error)}`, kind);
  }
  try {
    checkApprovalPolicy(parsed, "policy");
  } catch (error) {
    throw new CliError(`--policy ${path}: ${errorMessage(error)}`, kind);
  }
  if (parsed.classifier !== undefined || typeof parsed.human === "function")
    throw new CliError(`--policy ${path}: a policy file holds rules (and human: "pause" or "deny") only`, kind);
  return parsed.rules ?? [];
}
