import type { SlashCommand } from "./slash-command.ts";

/** `/exit` (or `/quit`): ends the CLI with 0, as Ctrl-D does. */
export const exitCommand: SlashCommand = {
  name: "exit",
  aliases: ["quit"],
  summary: "leave (as Ctrl-D does); the session stays resumable",
  run: async () => ({ type: "exit", code: 0 }),
};
