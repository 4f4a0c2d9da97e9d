/**
 * `text` made safe to print on a terminal, for everything a model, a tool, a server or a
 * workspace file produced: every character that could move the cursor, erase, recolour, retitle,
 * reorder or hide text is shown as a visible escape instead of acting. Line feeds and tabs stay
 * (and `\r\n` becomes `\n`), so text keeps its lines. Escapes:
 * - C0 controls as caret notation: ESC `^[`, backspace `^H`, carriage return `^M`, BEL `^G`; DEL `^?`;
 * - C1 controls as `\x9b`;
 * - Unicode format characters (bidi overrides, embeddings, isolates and marks, zero-width spaces
 *   and joiners, the BOM, invisible operators, tag characters), the line and paragraph separators,
 *   the Hangul fillers that render as nothing, and lone surrogates as `<U+202E>`.
 * A zero-width joiner between two pictographs (an emoji sequence such as a family) is kept.
 * The result contains none of these characters, so escaping it again changes nothing. Apply it
 * before adding the CLI's own styling.
 */
export function visibleText(text: string): string {
  return text
    .replace(/\r\n/g, "\n")
    .replace(hidden, (character, offset: number, whole: string) =>
      character === "\n" || character === "\t" || isEmojiJoiner(character, offset, whole)
        ? character
        : visibleEscape(character),
    );
}

/**
 * `visibleText` for a place that holds one line (a path, a command line, a name): line feeds
 * and tabs are escaped too (`^J`, `^I`), so nothing in it can start another line.
 */
export function visibleLine(text: string): string {
  return text.replace(hidden, (character, offset: number, whole: string) =>
    isEmojiJoiner(character, offset, whole) ? character : visibleEscape(character),
  );
}

/**
 * `JSON.stringify(value)` for a JSON line a terminal may show (`--json`): the same JSON, with
 * every character `visibleText` would escape written as a `\uXXXX` escape (JSON escapes only C0
 * controls itself), so the line cannot act on a terminal and parses to the same value.
 */
export function visibleJson(value: unknown): string {
  return JSON.stringify(value).replace(hidden, unicodeEscapes);
}

function unicodeEscapes(character: string): string {
  let escaped = "";
  for (let index = 0; index < character.length; index++)
    escaped += `\\u${character.charCodeAt(index).toString(16).padStart(4, "0")}`;
  return escaped;
}

// Cc: C0, DEL and C1; Cf: format characters; Zl/Zp: line and paragraph separators; Cs: a lone
// surrogate; and the fillers that are letters yet draw nothing.
const hidden = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u115F\u1160\u3164\uFFA0]/gu;

function visibleEscape(character: string): string {
  const code = character.codePointAt(0)!;
  if (code < 0x20) return `^${String.fromCharCode(code + 64)}`;
  if (code === 0x7f) return "^?";
  if (code <= 0x9f) return `\\x${code.toString(16)}`;
  return `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`;
}

// Emoji sequences (👨‍👩‍👧) join pictographs with U+200D; between two of them it hides nothing.
function isEmojiJoiner(character: string, offset: number, whole: string): boolean {
  if (character !== "\u200d") return false;
  return (
    /\p{Extended_Pictographic}\uFE0F?$/u.test(whole.slice(Math.max(0, offset - 3), offset)) &&
    /^\p{Extended_Pictographic}/u.test(whole.slice(offset + 1, offset + 3))
  );
}
