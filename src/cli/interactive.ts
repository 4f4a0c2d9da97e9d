import type { Style } from "./ansi.ts";
import { contextUsage } from "../loop/context-usage.ts";
import { errorMessage } from "../errors.ts";
import { formatContextTable } from "./context-table.ts";
import { visibleText } from "./visible-text.ts";
import { runTask, type TaskContext } from "./run-task.ts";
import type { TerminalInput } from "./terminal-input.ts";

/**
 * The interactive prompt: reads a task, runs it in the session, and again, so every task sees
 * the ones before. Ends with 0 on Ctrl-D or `/exit`, 130 on Ctrl-C at the prompt; a task that
 * fails or is interrupted just brings the prompt back.
 */
export async function interactive(
  context: TaskContext,
  input: TerminalInput,
  out: NodeJS.WritableStream,
  style: Style,
): Promise<number> {
  out.write(
    style.dim(
      "Type a task and press Enter; /context shows where the context goes. Ctrl-C interrupts a task; Ctrl-C or Ctrl-D at the prompt exits.\n",
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
    if (task === "/exit" || task === "/quit") return 0;
    if (task === "/context") {
      await showContext(context, out, style);
      continue;
    }
    await runTask(context, task);
  }
}

// The session as the next task would send it: its messages and the tools, by part.
async function showContext(context: TaskContext, out: NodeJS.WritableStream, style: Style): Promise<void> {
  try {
    const session = typeof context.session === "function" ? await context.session() : context.session;
    out.write(formatContextTable(contextUsage(session, { tools: context.tools }), style, context.contextWindow));
  } catch (error) {
    out.write(style.red(`/context: ${visibleText(errorMessage(error))}\n`));
  }
}
