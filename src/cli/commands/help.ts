import { goOn, type SlashCommand } from "./slash-command.ts";

/** `/help`: every command with its one line, then the keys of the prompt. */
export const helpCommand: SlashCommand = {
  name: "help",
  summary: "this list of commands and keys",
  run: async (_argument, { commands, out, style }) => {
    const usage = (command: SlashCommand): string =>
      `/${command.name}${command.argument === undefined ? "" : ` ${command.argument}`}`;
    const width = Math.max(...commands.map((command) => usage(command).length)) + 2;
    const lines = commands.map((command) => `  ${style.bold(usage(command).padEnd(width))}${command.summary}`);
    // terminal-safe: the registry's own literals.
    out.write(
      `Commands:\n${lines.join("\n")}\n${style.dim(
        [
          "Keys: Tab completes a command or an @path (a file in the workspace) · Up/Down recall earlier input",
          "      Shift-Tab switches the permission mode · a line ending in \\ (or Shift-Enter, Alt-Enter) goes on on the next line",
          "      Ctrl-C interrupts a task, or at the prompt exits · Ctrl-D exits",
        ].join("\n"),
      )}\n`,
    );
    return goOn;
  },
};
