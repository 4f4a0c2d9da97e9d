import { createInterface, type Interface } from "node:readline";
import { lineBreakKeys, type KeypressKey } from "./line-break-keys.ts";
import type { PromptHistory } from "./prompt-history.ts";
import { linesLeft, typeAheadKeys, type TypeAhead } from "./type-ahead.ts";
import { visibleLine } from "./visible-text.ts";

/** What a question got: a line, Ctrl-C, or the end of input (Ctrl-D). */
/** `continued`: the line was ended with Shift-Enter or Alt-Enter (`lineBreakKeys`), so the input goes on on the next line. */
export type LineResult = { type: "line"; text: string; continued?: boolean } | { type: "interrupt" } | { type: "end" };

/** What a one-key question got: the key pressed (one character), Ctrl-C, or the end of input (Ctrl-D). */
export type KeyResult = { type: "key"; key: string } | { type: "interrupt" } | { type: "end" };

/**
 * The keyboard, for a CLI that alternates between reading a line and running a task. Between
 * questions the terminal is in raw mode while a watcher is active, so Ctrl-C arrives as a key
 * (and keys typed meanwhile are not echoed into the task's output).
 */
export type TerminalInput = {
  /**
   * Reads one line with line editing. `history`: share the history of earlier `history`
   * questions (the task prompt). `signal` cancels the question (it resolves `interrupt`).
   * `onShiftTab`: Shift-Tab (the terminal sends ESC [ Z) calls it and shows the prompt it returns,
   * keeping what was typed.
   */
  question: (prompt: string, options?: QuestionOptions) => Promise<LineResult>;
  /**
   * Shows `prompt` and reads one key in raw mode, no Enter needed; the key is echoed after the
   * prompt. Keys typed before the prompt appeared never answer it, and the rest of what arrives
   * with the key (a paste, an Enter after it) is dropped, so it cannot answer the next question.
   * `signal` cancels it (it resolves `interrupt`).
   */
  key: (prompt: string, options?: { signal?: AbortSignal }) => Promise<KeyResult>;
  /**
   * From now until the returned function is called, Ctrl-C calls `onInterrupt` (also during
   * questions, which report it themselves). Lines typed and entered meanwhile are queued (see
   * `TypeAhead`), each handed to `join` when given (the running task's follow-up): Esc, or Ctrl-C
   * while any is typed or can be taken back, takes them back instead of interrupting.
   */
  watchInterrupts: (onInterrupt: () => void, join?: (line: string) => () => boolean) => () => void;
  /**
   * The lines entered while the last task ran that it never took up (it ended first), joined with
   * line feeds (undefined: none); the queue is emptied.
   */
  takeTypedAhead: () => string | undefined;
  /**
   * Shows `text` (whole lines, made visible by the caller) above the question open now, which is
   * shown again after it with what was typed so far; `false` (nothing written) when no question is
   * open.
   */
  aside: (text: string) => boolean;
};

/** A `TerminalInput` on a TTY `input`, echoing to `output`; `history` keeps the `history` questions' lines across runs. */
export function terminalInput(
  input: NodeJS.ReadStream,
  output: NodeJS.WritableStream,
  options: { history?: PromptHistory } = {},
): TerminalInput {
  const keyboard: Keyboard = {
    input,
    output,
    history: options.history?.load() ?? [],
    saved: options.history,
    watcher: undefined,
    ahead: { partial: "", queued: [], join: undefined },
    aside: undefined,
    onData: (chunk) => {
      const text = typeof chunk === "string" ? chunk : chunk.toString("utf8");
      if (typeAheadKeys(keyboard.ahead, text, output) === "interrupt" && keyboard.watcher !== undefined)
        keyboard.watcher();
    },
  };
  return {
    question: (prompt, options = {}) => askLine(keyboard, prompt, options),
    key: (prompt, options = {}) => askKey(keyboard, prompt, options),
    watchInterrupts: (onInterrupt, join) => {
      keyboard.watcher = onInterrupt;
      keyboard.ahead.join = join;
      startWatching(keyboard);
      return () => {
        keyboard.watcher = undefined;
        keyboard.ahead.join = undefined;
        keyboard.ahead.partial = "";
        stopWatching(keyboard);
      };
    },
    takeTypedAhead: () => linesLeft(keyboard.ahead),
    aside: (text) => {
      if (keyboard.aside === undefined) return false;
      keyboard.aside(text);
      return true;
    },
  };
}

/**
 * The terminal's input and what is listening to it. While `watcher` is set, `onData` is attached
 * (raw mode, so Ctrl-C arrives as a key) except during a question, which reads the keys itself
 * and attaches it again when it is answered.
 */
type Keyboard = {
  readonly input: NodeJS.ReadStream;
  readonly output: NodeJS.WritableStream;
  /** The lines of earlier `history` questions, newest first (as readline keeps them). */
  history: string[];
  /** Where the history is kept across runs, if anywhere. */
  readonly saved: PromptHistory | undefined;
  /** Called on Ctrl-C between questions; undefined when nobody watches. */
  watcher: (() => void) | undefined;
  /** What was typed while a task ran. */
  ahead: TypeAhead;
  /** Writes a text above the question open now and shows the question again; undefined when none is open. */
  aside: ((text: string) => void) | undefined;
  readonly onData: (chunk: Buffer | string) => void;
};

/** How a line is read: see `TerminalInput.question`. */
export type QuestionOptions = {
  history?: boolean;
  signal?: AbortSignal;
  onShiftTab?: () => string;
  /** What Tab completes (readline's completer: the candidates and the text they replace). */
  complete?: (line: string) => [string[], string];
};

function askLine(keyboard: Keyboard, prompt: string, options: QuestionOptions): Promise<LineResult> {
  const { output, watcher, onData } = keyboard;
  // readline reads the keys itself meanwhile, Ctrl-C included.
  if (watcher !== undefined) keyboard.input.off("data", onData);
  const shiftTab = { pressed: false };
  const reader = lineReader(keyboard, options, shiftTab);
  const isLineBreak = lineBreakKeys();
  let continued = false;
  let closed = false;
  const onKey = (_text: string | undefined, key: KeypressKey | undefined): void => {
    // Shift-Enter or Alt-Enter, where the terminal tells it from Enter: the line ends there, and
    // the input goes on (readline would ignore the key, or insert part of it as text).
    const lineBreak = isLineBreak(key);
    if (lineBreak !== undefined) {
      continued = true;
      setImmediate(() => {
        if (closed) return;
        for (let count = 0; count < lineBreak.erase; count++) reader.write(null, { name: "backspace" });
        reader.write(null, { name: "return" });
      });
      return;
    }
    if (key?.name !== "tab" || key.shift !== true || options.onShiftTab === undefined) return;
    // Readline offers it to the completer as a Tab: the completer is told to complete nothing.
    shiftTab.pressed = true;
    const next = options.onShiftTab;
    // After readline's own handling of the key: clear the line, let the change write what it
    // says, then draw the new prompt with what was typed.
    setImmediate(() => {
      output.write("\r\x1b[2K");
      reader.setPrompt(next());
      reader.prompt(true);
    });
  };
  keyboard.input.prependListener("keypress", onKey);
  return new Promise<LineResult>((resolve) => {
    let settled = false;
    const settle = (result: LineResult): void => {
      if (settled) return;
      settled = true;
      closed = true;
      keyboard.input.off("keypress", onKey);
      keyboard.aside = undefined;
      options.signal?.removeEventListener("abort", onAbort);
      reader.close();
      if (keyboard.watcher !== undefined) startWatching(keyboard);
      resolve(result);
    };
    const onAbort = (): void => {
      output.write("\n");
      settle({ type: "interrupt" });
    };
    reader.on("SIGINT", () => {
      output.write("^C\n");
      settle({ type: "interrupt" });
    });
    reader.on("close", () => settle({ type: "end" }));
    if (options.signal?.aborted === true) return onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    // As Shift-Tab does: clear the prompt's line, write above it, draw the prompt with what was typed.
    keyboard.aside = (text) => {
      // terminal-safe: `text` is made visible by the caller of `aside`.
      output.write(`\r\x1b[2K${text}`);
      reader.prompt(true);
    };
    reader.question(prompt, (text) => settle(continued ? { type: "line", text, continued } : { type: "line", text }));
  });
}

/**
 * A readline interface with line editing; with `history`, it shares (and updates) the keyboard's
 * history. Its completer completes nothing for a Tab that was a Shift-Tab (`shiftTab.pressed`).
 */
function lineReader(keyboard: Keyboard, options: QuestionOptions, shiftTab: { pressed: boolean }): Interface {
  const history = options.history === true;
  const reader = createInterface({
    input: keyboard.input,
    output: keyboard.output,
    terminal: true,
    historySize: history ? 500 : 0,
    ...(history ? { history: keyboard.history, removeHistoryDuplicates: true } : {}),
    completer: (line: string): [string[], string] => {
      if (shiftTab.pressed || options.complete === undefined) {
        shiftTab.pressed = false;
        return [[], line];
      }
      const [candidates, replaced] = options.complete(line);
      // Readline lists ambiguous choices only at a second Tab, after a first that shows nothing: they
      // are listed at the first (names escaped: file names come from the workspace).
      if (candidates.length > 1 && commonPrefix(candidates) === replaced) {
        // terminal-safe: each candidate goes through visibleLine
        keyboard.output.write(`\r\n${candidates.map(visibleLine).join("  ")}\r\n`);
        setImmediate(() => reader.prompt(true));
        return [[], line];
      }
      return [candidates, replaced];
    },
  });
  if (history)
    reader.on("history", (updated: string[]) => {
      keyboard.history = updated;
      keyboard.saved?.save(updated);
    });
  return reader;
}

function askKey(keyboard: Keyboard, prompt: string, options: { signal?: AbortSignal }): Promise<KeyResult> {
  const { input, output, onData } = keyboard;
  if (options.signal?.aborted === true) return Promise.resolve({ type: "interrupt" });
  if (keyboard.watcher !== undefined) input.off("data", onData);
  return new Promise<KeyResult>((resolve) => {
    let settled = false;
    const settle = (result: KeyResult, echo: string): void => {
      if (settled) return;
      settled = true;
      keyboard.aside = undefined;
      input.off("data", onKey);
      input.off("end", onEnd);
      options.signal?.removeEventListener("abort", onAbort);
      // terminal-safe: keyAnswer echoes a key only when it is a plain character.
      output.write(echo);
      if (keyboard.watcher !== undefined) {
        input.on("data", onData);
      } else {
        input.setRawMode(false);
        input.pause();
      }
      resolve(result);
    };
    const onKey = (chunk: Buffer | string): void => {
      const { result, echo } = keyAnswer(typeof chunk === "string" ? chunk : chunk.toString("utf8"));
      settle(result, echo);
    };
    const onEnd = (): void => settle({ type: "end" }, "\n");
    const onAbort = (): void => settle({ type: "interrupt" }, "\n");
    // Whatever was typed before the question is not an answer to it.
    while (input.read() !== null);
    // terminal-safe: a prompt is the CLI's own question, its names made visible by whoever asks.
    output.write(prompt);
    // terminal-safe: `text` is made visible by the caller of `aside`, `prompt` as above.
    keyboard.aside = (text) => output.write(`\n${text}${prompt}`);
    input.setRawMode(true);
    input.on("data", onKey);
    input.once("end", onEnd);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    input.resume();
  });
}

/** What the first key of `text` answers, and what to echo for it; the rest of `text` is dropped. */
function keyAnswer(text: string): { result: KeyResult; echo: string } {
  const key = [...text][0] ?? "";
  if (key === "\x03") return { result: { type: "interrupt" }, echo: "^C\n" };
  if (key === "\x04") return { result: { type: "end" }, echo: "\n" };
  // The key itself is shown only when it is a plain character: anything else could act on the screen.
  return { result: { type: "key", key }, echo: `${/^[\p{L}\p{N}\p{P}\p{S}]$/u.test(key) ? key : ""}\n` };
}

function startWatching(keyboard: Keyboard): void {
  keyboard.input.setRawMode(true);
  keyboard.input.on("data", keyboard.onData);
  keyboard.input.resume();
}

function stopWatching(keyboard: Keyboard): void {
  keyboard.input.off("data", keyboard.onData);
  keyboard.input.setRawMode(false);
  keyboard.input.pause();
}

function commonPrefix(texts: readonly string[]): string {
  let prefix = texts[0] ?? "";
  for (const text of texts) while (!text.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix;
}
