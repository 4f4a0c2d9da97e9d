import { visibleLine } from "./visible-text.ts";

/**
 * What the user types while a task runs (the terminal in raw mode, nothing echoed into the task's
 * output): `partial` the line being typed, `queued` the lines entered, which run as the next task
 * once this one ends. Esc, or Ctrl-C while anything is typed or queued, takes it all back.
 */
export type TypeAhead = { partial: string; queued: string[] };

/**
 * Reads `text` (keys that arrived while a task runs) into `ahead`. Returns `interrupt` when a
 * Ctrl-C found nothing to take back (it is then the task's), and writes on `output` when a line is
 * queued or taken back, so the user sees what will run.
 */
export function typeAheadKeys(ahead: TypeAhead, text: string, output: NodeJS.WritableStream): "interrupt" | undefined {
  // An escape sequence (an arrow key, a paste bracket) is not Esc: it is dropped whole.
  if (text.startsWith("\x1b") && text.length > 1) return undefined;
  for (const key of text) {
    if (key === "\x03" || key === "\x1b") {
      if (ahead.partial === "" && ahead.queued.length === 0) {
        if (key === "\x03") return "interrupt";
        continue;
      }
      const dropped = ahead.queued.length;
      ahead.partial = "";
      ahead.queued = [];
      output.write(`\n(${dropped === 0 ? "typed text" : "queued input"} taken back)\n`);
    } else if (key === "\r" || key === "\n") {
      if (ahead.partial.trim() === "") continue;
      ahead.queued.push(ahead.partial);
      // terminal-safe: visibleLine escapes control characters of what was typed.
      output.write(
        `\n(queued: ${visibleLine(ahead.partial)} — runs when this task ends; Esc or Ctrl-C takes it back)\n`,
      );
      ahead.partial = "";
    } else if (key === "\x7f" || key === "\b") {
      ahead.partial = [...ahead.partial].slice(0, -1).join("");
    } else if (key >= " ") {
      ahead.partial += key;
    }
  }
  return undefined;
}
