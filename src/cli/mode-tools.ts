import type { AgentHooks } from "../loop/hooks.ts";
import type { ModeControl } from "./permission-mode.ts";
import { planToolName } from "./plan-tool.ts";

/**
 * The `beforeModelCall` hook that offers the model the tools of the mode in use: in plan mode the
 * ones that only look and `propose_plan`, so that the model plans instead of trying changes the
 * permission hook would deny; in every other mode all of them but `propose_plan`.
 */
export function modeToolOffer(
  modes: ModeControl,
  guarded: (name: string) => boolean,
): NonNullable<AgentHooks["beforeModelCall"]> {
  return ({ tools }) => {
    const plan = modes.current() === "plan";
    return {
      tools: tools.filter((offered) => (plan ? !guarded(offered.name) : offered.name !== planToolName)),
    };
  };
}
