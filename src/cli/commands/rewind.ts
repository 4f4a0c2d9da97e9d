import { errorMessage } from "../../errors.ts";
import { visibleLine, visibleText } from "../visible-text.ts";
import { goOn, type SlashCommand } from "./slash-command.ts";

/**
 * `/rewind [n]`: goes back to before user turn `n` of the session (without `n`, the turns are
 * listed and one is asked for), the files the agent wrote or edited since included; shows what
 * changes and asks first (`rewindDialog`).
 */
export const rewindCommand: SlashCommand = {
  name: "rewind",
  argument: "[n]",
  summary: "go back to before a turn: the conversation and the files the agent changed since",
  run: async (argument, { rewind, out, style }) => {
    if (argument !== "" && !/^\d{1,9}$/.test(argument)) {
      out.write(style.red(`/rewind: ${visibleLine(argument)} is not a turn number (/rewind lists them)\n`));
      return goOn;
    }
    try {
      await rewind(argument === "" ? undefined : Number(argument));
    } catch (error) {
      out.write(style.red(`/rewind: ${visibleText(errorMessage(error))}\n`));
    }
    return goOn;
  },
};
