import { createInterface } from "node:readline";

/** What a question got: a line, Ctrl-C, or the end of input (Ctrl-D). */
export type LineResult = { type: "line"; text: string } | { type: "interrupt" } | { type: "end" };

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
   */
  question: (prompt: string, options?: { history?: boolean; signal?: AbortSignal }) => Promise<LineResult>;
  /**
   * Shows `prompt` and reads one key in raw mode, no Enter needed; the key is echoed after the
   * prompt. Keys typed before the prompt appeared never answer it, and the rest of what arrives
   * with the key (a paste, an Enter after it) is dropped, so it cannot answer the next question.
   * `signal` cancels it (it resolves `interrupt`).
   */
  key: (prompt: string, options?: { signal?: AbortSignal }) => Promise<KeyResult>;
  /** From now until the returned function is called, Ctrl-C calls `onInterrupt` (also during questions, which report it themselves). */
  watchInterrupts: (onInterrupt: () => void) => () => void;
};

/** A `TerminalInput` on a TTY `input`, echoing to `output`. */
export function terminalInput(input: NodeJS.ReadStream, output: NodeJS.WritableStream): TerminalInput {
  let history: string[] = [];
  let watcher: (() => void) | undefined;
  const onData = (chunk: Buffer | string): void => {
    if ((typeof chunk === "string" ? chunk.includes("\x03") : chunk.includes(3)) && watcher !== undefined) watcher();
  };
  const startWatching = (): void => {
    input.setRawMode(true);
    input.on("data", onData);
    input.resume();
  };
  const stopWatching = (): void => {
    input.off("data", onData);
    input.setRawMode(false);
    input.pause();
  };
  return {
    question: (prompt, options = {}) => {
      // readline reads the keys itself meanwhile, Ctrl-C included.
      if (watcher !== undefined) input.off("data", onData);
      const reader = createInterface({
        input,
        output,
        terminal: true,
        historySize: options.history === true ? 500 : 0,
        ...(options.history === true ? { history, removeHistoryDuplicates: true } : {}),
      });
      if (options.history === true) reader.on("history", (updated: string[]) => (history = updated));
      return new Promise<LineResult>((resolve) => {
        let settled = false;
        const settle = (result: LineResult): void => {
          if (settled) return;
          settled = true;
          options.signal?.removeEventListener("abort", onAbort);
          reader.close();
          if (watcher !== undefined) startWatching();
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
        reader.question(prompt, (text) => settle({ type: "line", text }));
      });
    },
    key: (prompt, options = {}) => {
      if (options.signal?.aborted === true) return Promise.resolve({ type: "interrupt" });
      if (watcher !== undefined) input.off("data", onData);
      return new Promise<KeyResult>((resolve) => {
        let settled = false;
        const settle = (result: KeyResult, echo: string): void => {
          if (settled) return;
          settled = true;
          input.off("data", onKey);
          input.off("end", onEnd);
          options.signal?.removeEventListener("abort", onAbort);
          output.write(echo);
          if (watcher !== undefined) {
            input.on("data", onData);
          } else {
            input.setRawMode(false);
            input.pause();
          }
          resolve(result);
        };
        const onKey = (chunk: Buffer | string): void => {
          const text = typeof chunk === "string" ? chunk : chunk.toString("utf8");
          const key = [...text][0] ?? "";
          if (key === "\x03") return settle({ type: "interrupt" }, "^C\n");
          if (key === "\x04") return settle({ type: "end" }, "\n");
          // The key itself is shown only when it is a plain character: anything else could act on the screen.
          settle({ type: "key", key }, `${/^[\p{L}\p{N}\p{P}\p{S}]$/u.test(key) ? key : ""}\n`);
        };
        const onEnd = (): void => settle({ type: "end" }, "\n");
        const onAbort = (): void => settle({ type: "interrupt" }, "\n");
        // Whatever was typed before the question is not an answer to it.
        while (input.read() !== null);
        output.write(prompt);
        input.setRawMode(true);
        input.on("data", onKey);
        input.once("end", onEnd);
        options.signal?.addEventListener("abort", onAbort, { once: true });
        input.resume();
      });
    },
    watchInterrupts: (onInterrupt) => {
      watcher = onInterrupt;
      startWatching();
      return () => {
        watcher = undefined;
        stopWatching();
      };
    },
  };
}
