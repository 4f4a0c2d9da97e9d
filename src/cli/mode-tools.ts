import type { AgentHooks } from "../loop/hooks.ts";
import type { ApprovalPolicy } from "../tools/approval-policy.ts";
import { matchPolicy } from "../tools/match-policy.ts";
import type { ModeControl } from "./permission-mode.ts";
import { planToolName } from "./plan-tool.ts";

/**
 * The `beforeModelCall` hook that offers the model the tools its policy may let run: not those a
 * rule denies whatever their input (plan mode's write, edit, bash and MCP tools; a `--policy`
 * file's deny of a whole tool), so that the model plans instead of trying calls that are denied;
 * and `propose_plan` only in plan mode.
 */
export function modeToolOffer(modes: ModeControl, policy: ApprovalPolicy): NonNullable<AgentHooks["beforeModelCall"]> {
  return ({ tools }) => {
    const plan = modes.current() === "plan";
    return {
      tools: tools.filter((offered) =>
        offered.name === planToolName
          ? plan
          : matchPolicy(policy, { name: offered.name, input: {} })?.action !== "deny",
      ),
    };
  };
}
