import { clearCommand } from "./clear.ts";
import { compactCommand } from "./compact.ts";
import { contextCommand } from "./context.ts";
import { costCommand } from "./cost.ts";
import { exitCommand } from "./exit.ts";
import { helpCommand } from "./help.ts";
import { modelCommand } from "./model.ts";
import { resumeCommand } from "./resume.ts";
import { rewindCommand } from "./rewind.ts";
import type { CommandContext, CommandOutcome, SlashCommand } from "./slash-command.ts";
import { visibleLine } from "../visible-text.ts";

/** The commands of the interactive prompt, in the order `/help` lists them. A new command: its own file, then a line here. */
export const slashCommands: readonly SlashCommand[] = [
  helpCommand,
  modelCommand,
  compactCommand,
  costCommand,
  contextCommand,
  rewindCommand,
  resumeCommand,
  clearCommand,
  exitCommand,
];

/**
 * The command a line of the prompt names, with its argument: a line `/name` or `/name argument`
 * (the name letters, digits and dashes). `undefined` when the line is not a command (a task such as
 * `/etc/hosts: what is it?` is one); `{ command: undefined }` for a command no one knows.
 */
export function parseCommandLine(
  line: string,
  commands: readonly SlashCommand[] = slashCommands,
): { name: string; argument: string; command: SlashCommand | undefined } | undefined {
  const match = /^\/([a-z][\w-]*)(?:\s+([^]*))?$/i.exec(line.trim());
  if (match === null) return undefined;
  const name = match[1]!.toLowerCase();
  const command = commands.find((candidate) => candidate.name === name || candidate.aliases?.includes(name) === true);
  return { name, argument: (match[2] ?? "").trim(), command };
}

/**
 * Runs the command `line` names, or says it knows no such command (with the closest one) and lets
 * the prompt go on. `undefined` when the line is not a command: it is a task.
 */
export async function runCommandLine(line: string, context: CommandContext): Promise<CommandOutcome | undefined> {
  const parsed = parseCommandLine(line, context.commands);
  if (parsed === undefined) return undefined;
  if (parsed.command !== undefined) return parsed.command.run(parsed.argument, context);
  const near = context.commands.find((command) => command.name.startsWith(parsed.name.slice(0, 2)));
  context.out.write(
    context.style.red(
      `Unknown command /${visibleLine(parsed.name)}${near === undefined ? "" : ` (did you mean /${visibleLine(near.name)}?)`}: /help lists the commands.\n`,
    ),
  );
  return { type: "continue" };
}

export type { CommandContext, CommandOutcome, SlashCommand } from "./slash-command.ts";
