import { errorMessage } from "../../errors.ts";
import { visibleText } from "../visible-text.ts";
import { goOn, type SlashCommand } from "./slash-command.ts";

/** `/clear`: a new session from the next task on; the one before stays stored and resumable. */
export const clearCommand: SlashCommand = {
  name: "clear",
  summary: "start a new session (the current one stays resumable)",
  run: async (_argument, { sessions, out, style }) => {
    const previous = sessions.current();
    try {
      const next = await sessions.startNew();
      const kept = previous.stored() === undefined ? "" : ` (${previous.id} is kept: /resume ${previous.id})`;
      out.write(`New session ${next.id}${style.dim(kept)}\n`);
    } catch (error) {
      out.write(style.red(`/clear: ${visibleText(errorMessage(error))}\n`));
    }
    return goOn;
  },
};
