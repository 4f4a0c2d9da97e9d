/** Text styles for the terminal; each is the identity when colour is off. */
export type Style = Record<"bold" | "dim" | "italic" | "red" | "green" | "yellow" | "cyan", (text: string) => string>;

/**
 * ANSI styles when `enabled` (a colour terminal: a TTY, and `NO_COLOR` unset; see `useColor`),
 * plain text otherwise.
 */
export function createStyle(enabled: boolean): Style {
  const wrap = (open: number, close: number) => (text: string) =>
    enabled ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return {
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    italic: wrap(3, 23),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
  };
}

/** Whether to colour output to `stream`: a TTY, unless `NO_COLOR` is set (no-color.org). */
export function useColor(stream: { isTTY?: boolean }, environment: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && (environment.NO_COLOR ?? "") === "";
}

/** Back to the start of the line and erase it. */
export const clearLine = "\r\x1b[2K";
