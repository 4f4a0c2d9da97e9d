/**
 * `text` made safe to print on a terminal: every control character that could move the cursor,
 * recolour, retitle or rewrite what is already on screen (C0 but line feed and tab, DEL, C1) is
 * shown as a visible escape (`^[`, `^?`, `\x9b`), and so are the bidirectional overrides that can
 * make text read differently than it runs (`<U+202E>`). `\r\n` becomes `\n`. Apply it to
 * everything a model, a tool or a file produced, before adding the CLI's own styling.
 */
export function visibleText(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this replaces.
  return text.replace(/\r\n/g, "\n").replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, visibleEscape);
}

function visibleEscape(character: string): string {
  const code = character.charCodeAt(0);
  if (code < 0x20) return `^${String.fromCharCode(code + 64)}`;
  if (code === 0x7f) return "^?";
  if (code <= 0x9f) return `\\x${code.toString(16)}`;
  return `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`;
}
