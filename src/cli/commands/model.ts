import { errorMessage } from "../../errors.ts";
import { visibleLine, visibleText } from "../visible-text.ts";
import { goOn, type SlashCommand } from "./slash-command.ts";

/** `/model <name>`: the next tasks use model `name` of the same provider; without a name, which model is in use. */
export const modelCommand: SlashCommand = {
  name: "model",
  argument: "<name>",
  summary: "switch the model for the next tasks (same provider)",
  run: async (argument, { models, out, style }) => {
    if (argument === "") {
      out.write(`model: ${visibleLine(models.current().description)} ${style.dim("(/model <name> switches)")}\n`);
      return goOn;
    }
    try {
      const selected = models.select(argument);
      out.write(`model: ${visibleLine(selected.description)} ${style.dim("(from the next task on)")}\n`);
    } catch (error) {
      out.write(style.red(`${visibleText(errorMessage(error))}\n`));
    }
    return goOn;
  },
};
