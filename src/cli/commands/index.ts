import { clearCommand } from "./clear.ts";
import { compactCommand } from "./compact.ts";
import { contextCommand } from "./context.ts";
import { costCommand } from "./cost.ts";
import { exitCommand } from "./exit.ts";
import { helpCommand } from "./help.ts";
import { mcpCommand } from "./mcp.ts";
import { modelCommand } from "./model.ts";
import { resumeCommand } from "./resume.ts";
import { rewindCommand } from "./rewind.ts";
import type { CommandContext, CommandOutcome, SlashCommand } from "./slash-command.ts";
import { closestName } from "../closest-name.ts";
import { visibleLine } from "../visible-text.ts";

/** The commands of the interactive prompt, in the order `/help` lists them. A new command: its own file, then a line here. */
export const slashCommands: readonly SlashCommand[] = [
  helpCommand,
  modelCommand,
  compactCommand,
  costCommand,
  contextCommand,
  mcpCommand,
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
 * Runs the command `line` names, or says it knows no such command (with the closest one), or that
 * the command takes no argument when one was given, and lets the prompt go on. `undefined` when the
 * line is not a command: it is a task.
 */
export async function runCommandLine(line: string, context: CommandContext): Promise<CommandOutcome | undefined> {
  const parsed = parseCommandLine(line, context.commands);
  if (parsed === undefined) return undefined;
  const { command, name, argument } = parsed;
  if (command !== undefined && (command.argument !== undefined || argument === ""))
    return command.run(argument, context);
  // A command that takes nothing is not run with something after it: `/clear the cache` may mean another thing.
  if (command !== undefined) {
    context.out.write(
      context.style.red(
        `/${visibleLine(command.name)} takes no argument (got ${visibleLine(JSON.stringify(argument))}); nothing was done.\n`,
      ),
    );
    return { type: "continue" };
  }
  const near = closestName(
    name,
    context.commands.flatMap((known) => [known.name, ...(known.aliases ?? [])]),
  );
  context.out.write(
    context.style.red(
      `Unknown command /${visibleLine(name)}${near === undefined ? "" : ` (did you mean /${visibleLine(near)}?)`}: /help lists the commands.\n`,
    ),
  );
  return { type: "continue" };
}

export type { CommandContext, CommandOutcome, SlashCommand } from "./slash-command.ts";
