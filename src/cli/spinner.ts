import { clearLine, type Style } from "./ansi.ts";
import { visibleLine } from "./visible-text.ts";

/** A spinner on the current (empty) line: `start` shows or relabels it, `stop` erases it. */
export type Spinner = { start: (label: string) => void; stop: () => void; readonly active: boolean };

const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/**
 * A spinner with a label and the seconds it has been showing, redrawn in place every 80 ms.
 * Only on a TTY (`enabled`); otherwise every call does nothing. The caller starts it only at the
 * start of a line and stops it before writing anything else.
 */
export function createSpinner(
  out: NodeJS.WritableStream & { columns?: number },
  style: Style,
  enabled: boolean,
): Spinner {
  let timer: NodeJS.Timeout | undefined;
  let label = "";
  let frame = 0;
  let since = 0;
  const draw = (): void => {
    const seconds = Math.floor((Date.now() - since) / 1000);
    const text = `${visibleLine(label)}${seconds > 0 ? ` ${seconds}s` : ""}`;
    const room = Math.max(10, (out.columns ?? 80) - 3);
    // terminal-safe: the frames are the spinner's own characters; the label is made visible above.
    out.write(
      `${clearLine}${style.cyan(frames[frame++ % frames.length]!)} ${style.dim(text.length > room ? `${text.slice(0, room - 1)}…` : text)}`,
    );
  };
  return {
    start: (next) => {
      if (!enabled) return;
      label = next;
      if (timer === undefined) {
        since = Date.now();
        timer = setInterval(draw, 80);
        timer.unref();
      }
      draw();
    },
    stop: () => {
      if (timer === undefined) return;
      clearInterval(timer);
      timer = undefined;
      out.write(clearLine);
    },
    get active() {
      return timer !== undefined;
    },
  };
}
