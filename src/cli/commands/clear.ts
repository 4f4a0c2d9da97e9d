import { errorMessage } from "../../errors.ts";
import { visibleLine, visibleText } from "../visible-text.ts";
import { goOn, type SlashCommand } from "./slash-command.ts";

/** `/clear`: a new session from the next task on; the one before stays stored and resumable. */
export const clearCommand: SlashCommand = {
  name: "clear",
  summary: "start a new session (the current one stays resumable)",
  run: async (_argument, { sessions, out, style }) => {
    const previous = sessions.current();
    try {
      const next = await sessions.startNew();
      const old = visibleLine(previous.id);
      const kept = previous.stored() === undefined ? "" : ` (${old} is kept: /resume ${old})`;
      out.write(`New session ${visibleLine(next.id)}${style.dim(kept)}\n`);
    } catch (error) {
      out.write(style.red(`/clear: ${visibleText(errorMessage(error))}\n`));
    }
    return goOn;
  },
};
