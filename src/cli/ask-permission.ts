import type { JsonObject } from "../session.ts";
import type { Style } from "./ansi.ts";
import type { AskPermission, PermissionDecision } from "./permissions.ts";
import { describeTarget } from "./summary.ts";
import type { TerminalInput } from "./terminal-input.ts";

/**
 * Asks on the terminal whether a tool call may run: shows what it would do (the command, the
 * text an edit replaces and its replacement, the start of a file to write), then
 * `y` (once), `a` (always, for this tool in this run) or `n` (deny; then a reason for the model,
 * also accepted inline as `n <reason>`). Ctrl-C at the prompt interrupts the task.
 */
export function terminalAsker(options: {
  input: TerminalInput;
  out: NodeJS.WritableStream;
  style: Style;
  /** Clears the task's output (spinner, open line) and holds it back while the prompt is shown. */
  beforeAsk: () => void;
  /** The prompt is answered: the task's output may go on. */
  afterAsk: () => void;
  /** Ctrl-C was pressed at the prompt. */
  onInterrupt: () => void;
}): AskPermission {
  const { input, out, style } = options;
  return async (request, signal) => {
    options.beforeAsk();
    try {
      return await ask(request, signal);
    } finally {
      options.afterAsk();
    }
  };

  async function ask(request: { name: string; input: JsonObject }, signal: AbortSignal): Promise<PermissionDecision> {
    out.write(`${style.bold(`● ${request.name}${describeTarget(request.name, request.input)}`)}\n${preview(request.name, request.input, style)}`);
    const interrupted = (): PermissionDecision => {
      if (!signal.aborted) options.onInterrupt();
      return { type: "deny", reason: "the task was interrupted" };
    };
    for (;;) {
      const answer = await input.question(`${style.yellow("?")} Allow ${request.name}? ${style.dim(`[y]es once · [a]lways for ${request.name} · [n]o`)} `, { signal });
      if (answer.type === "interrupt") return interrupted();
      if (answer.type === "end") return { type: "deny", reason: "no answer" };
      const text = answer.text.trim();
      const key = text.toLowerCase();
      if (key === "y" || key === "yes") return { type: "allow-once" };
      if (key === "a" || key === "always") return { type: "allow-always" };
      if (/^n(o)?\s+\S/i.test(text)) return { type: "deny", reason: text.replace(/^no?\s+/i, "") };
      if (key === "n" || key === "no") {
        const reason = await input.question(`  ${style.dim("Why? (sent to the model; Enter to skip)")} `, { signal });
        if (reason.type === "interrupt") return interrupted();
        return { type: "deny", reason: reason.type === "line" ? reason.text : "" };
      }
      out.write(style.dim("  Answer y, a or n.\n"));
    }
  }
}

// What the call would do, a few lines at most.
function preview(name: string, input: JsonObject, style: Style): string {
  const lines = (value: unknown): string[] => (typeof value === "string" ? value.replace(/\n$/, "").split("\n") : []);
  const some = (all: string[], mark: (line: string) => string, max = 12): string =>
    all.slice(0, max).map((line) => `  ${mark(line)}\n`).join("") + (all.length > max ? style.dim(`  … ${all.length - max} more lines\n`) : "");
  switch (name) {
    case "bash":
      return some(lines(input.command), (line) => `$ ${line}`, 20);
    case "edit":
      return some(lines(input.oldText), (line) => style.red(`- ${line}`)) + some(lines(input.newText), (line) => style.green(`+ ${line}`));
    case "write": {
      const content = lines(input.content);
      return style.dim(`  ${content.length} ${content.length === 1 ? "line" : "lines"}\n`) + some(content, (line) => style.dim(`│ ${line}`), 8);
    }
    default: {
      const json = JSON.stringify(input, null, 2);
      return some(json.split("\n"), (line) => style.dim(line), 15);
    }
  }
}
