import { visibleLine } from "./visible-text.ts";

/**
 * What the user types while a task runs (the terminal in raw mode, nothing echoed into the task's
 * output): `partial` the line being typed, `queued` the lines entered. `join` hands an entered line
 * to the running task as a follow-up (it goes to the model once the model has answered, in the
 * same run) and returns what takes it back; without it, a line waits for the task to end and runs
 * as the next one. Esc, or Ctrl-C while anything is typed or can still be taken back, takes it all
 * back.
 */
export type TypeAhead = {
  partial: string;
  queued: QueuedLine[];
  join: ((line: string) => () => boolean) | undefined;
};

/** A line entered while a task ran; `takeBack` returns true when the task had not taken it up yet. */
export type QueuedLine = { text: string; takeBack: () => boolean };

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
      // Every line is taken back, not only the first: a line the task already took stays in it.
      const takenBack = ahead.queued.map((line) => line.takeBack()).filter(Boolean).length;
      const typed = ahead.partial !== "";
      ahead.partial = "";
      ahead.queued = [];
      if (takenBack === 0 && !typed) {
        if (key === "\x03") return "interrupt";
        continue;
      }
      output.write(`\n(${takenBack === 0 ? "typed text" : "queued input"} taken back)\n`);
    } else if (key === "\r" || key === "\n") {
      if (ahead.partial.trim() === "") continue;
      const text = ahead.partial;
      ahead.partial = "";
      ahead.queued.push({ text, takeBack: ahead.join?.(text) ?? (() => true) });
      const when = ahead.join === undefined ? "runs when this task ends" : "goes to the model once it has answered";
      // terminal-safe: visibleLine escapes control characters of what was typed.
      output.write(`\n(queued: ${visibleLine(text)} — ${when}; Esc or Ctrl-C takes it back)\n`);
    } else if (key === "\x7f" || key === "\b") {
      ahead.partial = [...ahead.partial].slice(0, -1).join("");
    } else if (key >= " ") {
      ahead.partial += key;
    }
  }
  return undefined;
}

/** The lines the task never took up (it ended first), joined with line feeds; undefined: none. Empties the queue. */
export function linesLeft(ahead: TypeAhead): string | undefined {
  const left = ahead.queued.filter((line) => line.takeBack()).map((line) => line.text);
  ahead.queued = [];
  return left.length === 0 ? undefined : left.join("\n");
}
