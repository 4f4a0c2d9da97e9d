import { errorMessage } from "../../errors.ts";
import { contextUsage } from "../../loop/context-usage.ts";
import { formatContextTable } from "../context-table.ts";
import { visibleText } from "../visible-text.ts";
import { goOn, type SlashCommand } from "./slash-command.ts";

/**
 * `/context`: the session as the next task would send it, by part (see `formatContextTable`).
 * A new session is measured without being stored: `/context` alone leaves no session file.
 */
export const contextCommand: SlashCommand = {
  name: "context",
  summary: "where the context goes: tokens by part against the window",
  run: async (_argument, { task, sessions, out, style }) => {
    try {
      const session = sessions.current().preview();
      out.write(
        formatContextTable(
          contextUsage(session, { tools: typeof task.tools === "function" ? task.tools() : task.tools }),
          style,
          task.contextWindow,
        ),
      );
    } catch (error) {
      out.write(style.red(`/context: ${visibleText(errorMessage(error))}\n`));
    }
    return goOn;
  },
};
