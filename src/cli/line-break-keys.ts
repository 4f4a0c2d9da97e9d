/** A key as readline's `keypress` event reports it. */
export type KeypressKey = { name?: string; meta?: boolean; shift?: boolean; sequence?: string };

/**
 * What a key means for a multi-line input: nothing (`undefined`), or a line break: the line ends
 * and the input goes on on the next one. `erase` counts the characters readline already inserted
 * into the line for it, which must be taken out again.
 */
export type LineBreak = { erase: number };

/**
 * Tells the keys that break a line apart from Enter, fed every key of one question in order. A
 * terminal reports a modified Enter (Shift, Alt/Option or Ctrl with it) in one of these ways:
 * - `ESC [ 13 ; <mod> u`: the kitty keyboard protocol (kitty, WezTerm, foot, Ghostty, iTerm2 with
 *   it on); readline reads it as one key it ignores.
 * - `ESC [ 27 ; <mod> ; 13 ~`: xterm's modifyOtherKeys. Readline does not know the form: it reads
 *   `ESC [ 27 ; <mod> ;` as a key it ignores, then `1`, `3` and `~` as typed text, which it has
 *   inserted by the time the `~` arrives (so `erase: 3`).
 * - `ESC CR` (or `ESC LF`): Alt/Option-Enter in most terminals without the kitty protocol (xterm,
 *   GNOME Terminal, Konsole, Windows Terminal, iTerm2 and Terminal.app with Option as Meta), and
 *   Shift-Enter where a terminal is set up to send it (VS Code's `/terminal-setup` does this).
 */
export function lineBreakKeys(): (key: KeypressKey | undefined) => LineBreak | undefined {
  // How much of `13~` has followed an `ESC [ 27 ; <mod> ;`, or undefined outside one.
  let pending: string | undefined;
  return (key) => {
    const sequence = key?.sequence ?? "";
    if (pending !== undefined) {
      const next = pending + sequence;
      pending = modifyOtherKeysEnter.startsWith(next) ? next : undefined;
      if (pending !== modifyOtherKeysEnter) return undefined;
      pending = undefined;
      return { erase: modifyOtherKeysEnter.length };
    }
    // eslint-disable-next-line no-control-regex -- key sequences begin with ESC.
    if (/^\x1b\[27;\d+;$/.test(sequence)) {
      pending = "";
      return undefined;
    }
    // eslint-disable-next-line no-control-regex -- key sequences begin with ESC.
    if (/^\x1b\[13;\d+(?::\d+)?u$/.test(sequence) && sequence !== "\x1b[13;1u") return { erase: 0 };
    if (key?.meta === true && (key.name === "return" || key.name === "enter")) return { erase: 0 };
    return undefined;
  };
}

// What readline inserts as text after the prefix of xterm's modifyOtherKeys Enter.
const modifyOtherKeysEnter = "13~";
