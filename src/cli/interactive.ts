import type { Style } from "./ansi.ts";
import { runCommandLine, slashCommands, type CommandContext } from "./commands/index.ts";
import type { PermissionMode } from "./permission-mode.ts";
import { runTask } from "./run-task.ts";

/**
 * The interactive prompt: reads a task, runs it in the session, and again, so every task sees
 * the ones before. A line `/name …` runs a command (`slashCommands`; `/help` lists them). The
 * prompt shows the permission mode when it is not `default`; Shift-Tab switches to the next one.
 * Ends with 0 on Ctrl-D or `/exit`, 130 on Ctrl-C at the prompt; a task that fails or is
 * interrupted just brings the prompt back.
 */
export async function interactive(context: Omit<CommandContext, "commands">): Promise<number> {
  const { input, out, style, modes } = context;
  const commands: CommandContext = { ...context, commands: slashCommands };
  out.write(
    style.dim(
      "Type a task and press Enter; /help lists the commands, Shift-Tab switches the permission mode. Ctrl-C interrupts a task; Ctrl-C or Ctrl-D at the prompt exits.\n",
    ),
  );
  for (;;) {
    out.write("\n");
    const answer = await input.question(modePrompt(modes.current(), style), {
      history: true,
      onShiftTab: () => modePrompt(modes.cycle(), style),
    });
    if (answer.type === "end") {
      out.write("\n");
      return 0;
    }
    if (answer.type === "interrupt") return 130;
    const task = answer.text.trim();
    if (task === "") continue;
    const outcome = await runCommandLine(task, commands);
    if (outcome?.type === "exit") return outcome.code;
    if (outcome === undefined) await runTask(context.task, task);
  }
}

/** The prompt for `mode`: `> ` in the default mode, else the mode's name before it (`plan > `). */
export function modePrompt(mode: PermissionMode, style: Style): string {
  const arrow = `${style.bold(style.cyan(">"))} `;
  return mode === "default" ? arrow : `${(mode === "yolo" ? style.red : style.yellow)(mode)} ${arrow}`;
}
