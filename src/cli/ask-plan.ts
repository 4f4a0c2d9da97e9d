import type { TerminalAskerOptions } from "./ask-permission.ts";
import { renderMarkdown } from "./markdown.ts";
import type { AskPlan, PlanDecision } from "./plan-tool.ts";

/**
 * Asks on the terminal whether the model's plan may be carried out: shows the plan (Markdown
 * rendered, its text made visible), then one key: `y` accept (then each change is asked about, the
 * `default` mode), `e` accept and let writes and edits run (`accept-edits`), `n` not yet (then a line
 * of feedback for the model). Ctrl-C interrupts the task; Ctrl-D answers no.
 */
export function terminalPlanAsker(options: TerminalAskerOptions): AskPlan {
  const { input, out, style } = options;
  const ask = async (plan: string, signal: AbortSignal): Promise<PlanDecision> => {
    // terminal-safe: renderMarkdown makes the plan's text visible as it renders it.
    out.write(`${style.bold("● The plan")}\n${renderMarkdown(plan, style)}\n`);
    for (;;) {
      const answer = await input.key(
        `${style.yellow("?")} Accept this plan? ${style.dim("[y] yes, ask before each change · [e] yes, allow edits · [n] no (press a key)")} `,
        { signal },
      );
      if (answer.type === "interrupt") {
        if (!signal.aborted) options.onInterrupt();
        return { type: "reject", feedback: "the task was interrupted" };
      }
      if (answer.type === "end") return { type: "reject", feedback: "" };
      const key = answer.key.toLowerCase();
      if (key === "y") return { type: "accept", mode: "default" };
      if (key === "e") return { type: "accept", mode: "accept-edits" };
      if (key === "n") {
        const reason = await input.question(
          `  ${style.dim("What should change? (sent to the model; Enter to skip)")} `,
          {
            signal,
          },
        );
        return { type: "reject", feedback: reason.type === "line" ? reason.text : "" };
      }
      out.write(style.dim("  Press y, e or n.\n"));
    }
  };
  return async (plan, signal) => {
    options.beforeAsk();
    try {
      return await ask(plan, signal);
    } finally {
      options.afterAsk();
    }
  };
}
