import type { Style } from "./ansi.ts";
import { runCommandLine, slashCommands, type CommandContext } from "./commands/index.ts";
import type { PermissionMode } from "./permission-mode.ts";
import { completeLine } from "./line-completion.ts";
import { runTask } from "./run-task.ts";
import type { QuestionOptions, TerminalInput } from "./terminal-input.ts";
import { visibleText } from "./visible-text.ts";

/**
 * The interactive prompt: reads a task, runs it in the session, and again, so every task sees
 * the ones before. A line `/name …` runs a command (`slashCommands`; `/help` lists them). The
 * prompt shows the permission mode when it is not `default`; Shift-Tab switches to the next one.
 * Ends with 0 on Ctrl-D or `/exit`, 130 on Ctrl-C at the prompt; a task that fails or is
 * interrupted just brings the prompt back.
 */
export async function interactive(context: Omit<CommandContext, "commands">, workspace: string): Promise<number> {
  const { input, out, style, modes } = context;
  const commands: CommandContext = { ...context, commands: slashCommands };
  out.write(
    style.dim(
      "Type a task and press Enter; /help lists the commands, Shift-Tab switches the permission mode. Ctrl-C interrupts a task; Ctrl-C or Ctrl-D at the prompt exits.\n",
    ),
  );
  const complete = (line: string): [string[], string] =>
    completeLine(line, { commands: slashCommands.map((command) => command.name), workspace });
  for (;;) {
    out.write("\n");
    // A line typed and entered while the last task ran is the next task, as if typed now.
    const queued = input.takeTypedAhead();
    // terminal-safe: the prompt is the CLI's own literals (a mode name and an arrow); the line is made visible
    if (queued !== undefined) out.write(`${modePrompt(modes.current(), style)}${visibleText(queued)}\n`);
    const answer =
      queued !== undefined
        ? { type: "text" as const, text: queued }
        : await readInput(input, style, {
            prompt: modePrompt(modes.current(), style),
            complete,
            onShiftTab: () => modePrompt(modes.cycle(), style),
          });
    if (answer.type === "end") {
      out.write("\n");
      return 0;
    }
    if (answer.type === "interrupt") return 130;
    if (answer.type === "cancel") continue;
    const task = answer.text.trim();
    if (task === "") continue;
    const outcome = await runCommandLine(task, commands);
    if (outcome?.type === "exit") return outcome.code;
    if (outcome === undefined) await runTask(context.task, task);
  }
}

/**
 * One input, over several lines: a line ending in a backslash, or ended with Shift-Enter where the
 * terminal reports it apart from Enter, or with Alt-Enter (`lineBreakKeys`), goes on on the next
 * line (prompt `… `); the lines are joined with line feeds. Ctrl-C on a continuation line drops
 * the input (`cancel`); on the first line it is `interrupt`.
 */
async function readInput(
  input: TerminalInput,
  style: Style,
  options: { prompt: string; complete: QuestionOptions["complete"] & {}; onShiftTab: () => string },
): Promise<{ type: "text"; text: string } | { type: "interrupt" } | { type: "end" } | { type: "cancel" }> {
  const lines: string[] = [];
  for (;;) {
    const answer = await input.question(lines.length === 0 ? options.prompt : `${style.dim("…")} `, {
      history: true,
      complete: options.complete,
      ...(lines.length === 0 ? { onShiftTab: options.onShiftTab } : {}),
    });
    if (answer.type === "end") return lines.length === 0 ? answer : { type: "text", text: lines.join("\n") };
    if (answer.type === "interrupt") return lines.length === 0 ? answer : { type: "cancel" };
    const backslash = answer.text.endsWith("\\");
    lines.push(backslash ? answer.text.slice(0, -1) : answer.text);
    if (!backslash && answer.continued !== true) return { type: "text", text: lines.join("\n") };
  }
}

/** The prompt for `mode`: `> ` in the default mode, else the mode's name before it (`plan > `). */
export function modePrompt(mode: PermissionMode, style: Style): string {
  const arrow = `${style.bold(style.cyan(">"))} `;
  return mode === "default" ? arrow : `${(mode === "yolo" ? style.red : style.yellow)(mode)} ${arrow}`;
}
