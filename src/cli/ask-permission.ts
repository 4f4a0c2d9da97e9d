import type { JsonObject } from "../session.ts";
import type { Style } from "./ansi.ts";
import type { AskPermission, PermissionDecision, PermissionRequest } from "./permissions.ts";
import { describeTarget } from "./summary.ts";
import type { TerminalInput } from "./terminal-input.ts";
import { visibleLine } from "./visible-text.ts";

/** What a question asked on the terminal during a task needs (the permission prompt, the plan's). */
export type TerminalAskerOptions = {
  input: TerminalInput;
  out: NodeJS.WritableStream;
  style: Style;
  /** Clears the task's output (spinner, open line) and holds it back while the prompt is shown. */
  beforeAsk: () => void;
  /** The prompt is answered: the task's output may go on. */
  afterAsk: () => void;
  /** Ctrl-C was pressed at the prompt. */
  onInterrupt: () => void;
};

/**
 * Asks on the terminal whether a tool call may run: shows what it would do (the whole command,
 * the text an edit replaces and its replacement, the file a write creates; control characters
 * made visible), then reads one key, no Enter needed: `y` (once), `a` (always, for this tool in
 * this run; not offered for a call that is asked every time), `n` (deny; then a line with a
 * reason for the model). A text too long for the screen shows its first and last lines, and
 * `v` shows all of it. Ctrl-C at the prompt interrupts the task; Ctrl-D denies.
 */
export function terminalAsker(options: TerminalAskerOptions): AskPermission {
  const { input, out, style } = options;
  return async (request, signal) => {
    options.beforeAsk();
    try {
      return await ask(request, signal);
    } finally {
      options.afterAsk();
    }
  };

  async function ask(request: PermissionRequest, signal: AbortSignal): Promise<PermissionDecision> {
    const name = visibleLine(request.name);
    const lines = previewLines(request.name, request.input, style);
    const shown = condense(lines, style);
    // A command is shown once, whole, in the lines below: the heading names the tool only.
    const target = request.name === "bash" ? "" : describeTarget(request.name, request.input);
    // terminal-safe: previewLines makes every line of the preview visible before `condense` cuts it.
    out.write(`${style.bold(`● ${name}${target}`)}\n${shown.text}`);
    if (request.alwaysAsk !== undefined) out.write(`${style.yellow(`  ⚠ ${visibleLine(request.alwaysAsk)}`)}\n`);
    const interrupted = (): PermissionDecision => {
      if (!signal.aborted) options.onInterrupt();
      return { type: "deny", reason: "the task was interrupted" };
    };
    const keys = [
      "[y] yes once",
      ...(request.alwaysAsk === undefined ? [`[a] always for ${name}`] : []),
      "[n] no",
      ...(shown.condensed ? ["[v] view all"] : []),
    ];
    for (;;) {
      const answer = await input.key(
        `${style.yellow("?")} Allow ${name}? ${style.dim(`${keys.join(" · ")} (press a key)`)} `,
        { signal },
      );
      if (answer.type === "interrupt") return interrupted();
      if (answer.type === "end") return { type: "deny", reason: "no answer" };
      const key = answer.key.toLowerCase();
      if (key === "y") return { type: "allow-once" };
      if (key === "a" && request.alwaysAsk === undefined) return { type: "allow-always" };
      if (key === "v" && shown.condensed) {
        // terminal-safe: `lines` are previewLines', each made visible.
        out.write(render(lines));
        continue;
      }
      if (key === "n") {
        const reason = await input.question(`  ${style.dim("Why? (sent to the model; Enter to skip)")} `, { signal });
        if (reason.type === "interrupt") return interrupted();
        return { type: "deny", reason: reason.type === "line" ? reason.text : "" };
      }
      out.write(
        style.dim(
          `  Press ${request.alwaysAsk === undefined ? "y, a or n" : "y or n"}${shown.condensed ? " (v to view all)" : ""}.\n`,
        ),
      );
    }
  }
}

/** Up to this many lines, of up to `longLine` characters, are shown whole; past it, the first and last `endLines`. */
const wholeLines = 60;
const endLines = 20;
const longLine = 400;

/** One line of a preview: its text (escaped) and how it is styled. */
type PreviewLine = { text: string; mark: (text: string) => string };

// Everything the call would do, one display line each, escaped.
function previewLines(name: string, input: JsonObject, style: Style): PreviewLine[] {
  const lines = (value: unknown): string[] =>
    typeof value === "string" ? value.replace(/\n$/, "").split("\n").map(visibleLine) : [];
  const plain = (text: string): string => text;
  switch (name) {
    case "bash":
      return lines(input.command).map((line) => ({ text: `  $ ${line}`, mark: plain }));
    case "edit":
      return [
        ...lines(input.oldText).map((line) => ({ text: `  - ${line}`, mark: style.red })),
        ...lines(input.newText).map((line) => ({ text: `  + ${line}`, mark: style.green })),
      ];
    case "write": {
      const content = lines(input.content);
      return [
        { text: `  ${content.length} ${content.length === 1 ? "line" : "lines"}`, mark: style.dim },
        ...content.map((line) => ({ text: `  │ ${line}`, mark: style.dim })),
      ];
    }
    default:
      return JSON.stringify(input, null, 2)
        .split("\n")
        .map((line) => ({ text: `  ${visibleLine(line)}`, mark: style.dim }));
  }
}

function render(lines: PreviewLine[]): string {
  return lines.map((line) => `${line.mark(line.text)}\n`).join("");
}

// A preview that fits is shown whole; a longer one shows its start and its end (where a
// dangerous last line would hide), long lines cut, and says that `v` shows everything.
function condense(lines: PreviewLine[], style: Style): { text: string; condensed: boolean } {
  if (lines.length <= wholeLines && lines.every((line) => line.text.length <= longLine))
    return { text: render(lines), condensed: false };
  const cut = (line: PreviewLine): string =>
    line.text.length > longLine
      ? `${line.mark(line.text.slice(0, longLine))}${style.yellow(`… (${line.text.length - longLine} more characters)`)}\n`
      : `${line.mark(line.text)}\n`;
  if (lines.length <= wholeLines)
    return {
      text: `${lines.map(cut).join("")}${style.yellow("  (long lines cut: press v to view all)")}\n`,
      condensed: true,
    };
  const hidden = lines.length - 2 * endLines;
  return {
    text: `${lines.slice(0, endLines).map(cut).join("")}${style.yellow(`  … ${hidden} more lines here: press v to view all`)}\n${lines.slice(-endLines).map(cut).join("")}`,
    condensed: true,
  };
}
