import { runCommandLine, slashCommands, type CommandContext } from "./commands/index.ts";
import { runTask } from "./run-task.ts";

/**
 * The interactive prompt: reads a task, runs it in the session, and again, so every task sees
 * the ones before. A line `/name …` runs a command (`slashCommands`; `/help` lists them). Ends
 * with 0 on Ctrl-D or `/exit`, 130 on Ctrl-C at the prompt; a task that fails or is interrupted
 * just brings the prompt back.
 */
export async function interactive(context: Omit<CommandContext, "commands">): Promise<number> {
  const { input, out, style } = context;
  const commands: CommandContext = { ...context, commands: slashCommands };
  out.write(
    style.dim(
      "Type a task and press Enter; /help lists the commands. Ctrl-C interrupts a task; Ctrl-C or Ctrl-D at the prompt exits.\n",
    ),
  );
  for (;;) {
    out.write("\n");
    const answer = await input.question(`${style.bold(style.cyan(">"))} `, { history: true });
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
