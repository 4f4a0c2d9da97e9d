import { tool, type Tool } from "../tools/tool.ts";
import type { ModeControl, PermissionMode } from "./permission-mode.ts";

/** What the user answered to a plan: accepted, and the mode to carry it out in; or not, with what should change. */
export type PlanDecision =
  { type: "accept"; mode: Extract<PermissionMode, "default" | "accept-edits"> } | { type: "reject"; feedback: string };

/** Shows a plan to the user and reads the answer; `signal` aborts with the task. */
export type AskPlan = (plan: string, signal: AbortSignal) => Promise<PlanDecision>;

/** The name of the plan tool. */
export const planToolName = "propose_plan";

/**
 * `propose_plan`: in plan mode, the model's way to leave it. The plan is shown to the user (`ask`),
 * who accepts it (the mode becomes `default` or `accept-edits`, and the model is told to carry it
 * out) or not (the model gets the user's feedback and stays in plan mode). Outside plan mode it
 * changes nothing and says so; without a terminal (`ask` absent) it fails, saying that no one can
 * accept a plan. It only looks: the permission hook never asks about it.
 */
export function planTool(options: { modes: ModeControl; ask?: AskPlan }): Tool {
  return tool({
    name: planToolName,
    description:
      "Plan mode only: propose your plan to the user (Markdown: the steps, the files you will change and how you will check the result). The user accepts it, then you carry it out, or tells you what to change.",
    inputSchema: {
      type: "object",
      properties: { plan: { type: "string", description: "The plan, in Markdown." } },
      required: ["plan"],
      additionalProperties: false,
    },
    eager: false,
    handler: async (input, context) => {
      const { plan } = input as { plan: string };
      const mode = options.modes.current();
      if (mode !== "plan") return `Not in plan mode (the mode is ${mode}): no plan needs accepting; go ahead.`;
      if (options.ask === undefined)
        throw new Error(
          "there is no terminal on which the user could accept a plan: say what you would do, and stop (they can run again with another --mode)",
        );
      const decision = await options.ask(plan, context.signal);
      if (decision.type === "reject") {
        const feedback = decision.feedback.trim();
        return `The user did not accept the plan${feedback === "" ? " (no reason given)" : `: ${feedback}`}. You are still in plan mode: change nothing, revise the plan and propose it again, or ask.`;
      }
      options.modes.set(decision.mode);
      return `The user accepted the plan. The permission mode is now ${decision.mode}${decision.mode === "accept-edits" ? " (writes and edits run without asking; commands still ask)" : " (the user is asked before each change)"}: carry the plan out.`;
    },
  });
}
