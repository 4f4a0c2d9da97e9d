import type { Style } from "./ansi.ts";
import { visibleText } from "./visible-text.ts";

/**
 * Markdown as it streams, rendered for the terminal: headings in bold, `**strong**`, `*emphasis*`,
 * `` `code` `` and fenced code blocks styled (their markers dropped), list bullets as `•`, quotes
 * behind a bar, links as their text and address, tables with their columns aligned (a table is
 * held back until its last row, since any row can widen a column). Text goes out as soon as nothing that follows
 * can change how it looks: a complete line, or the part of one before which no inline marker is
 * left open (so a stream that stalls shows what it has); lines that could be a code fence wait
 * until they are complete. Control characters of the text are made visible before any styling
 * is added.
 */
export type MarkdownRenderer = {
  /** The next piece of the text; returns what can be shown now, rendered. */
  push: (text: string) => string;
  /** The text is complete: returns the rest of its last line, rendered (no line break added); the next text starts afresh. */
  end: () => string;
  /** Forgets what was not shown yet and any open code block (the text is void, e.g. a retried model call). */
  reset: () => void;
};

/** A renderer writing with `style` (plain text for styles that are off). */
export function markdownRenderer(style: Style): MarkdownRenderer {
  const state: StreamState = {
    style,
    fence: undefined,
    table: undefined,
    pending: "",
    continuation: undefined,
    before: "",
  };
  return {
    push: (text) => {
      // Only the new text is searched for line ends, and a line held back is only appended to (never
      // read again until its end comes): each piece costs its own length, whatever the line holds.
      let out = "";
      let rest = text;
      for (let newline = rest.indexOf("\n"); newline !== -1; newline = rest.indexOf("\n")) {
        const line = (state.pending + rest.slice(0, newline)).replace(/\r$/, "");
        state.pending = "";
        rest = rest.slice(newline + 1);
        const shown = finishLine(state, line);
        if (shown !== undefined) out += `${shown}\n`;
      }
      state.pending += rest;
      return out + partial(state);
    },
    end: () => {
      const line = state.pending;
      state.pending = "";
      const last = line === "" && state.continuation === undefined ? undefined : finishLine(state, line);
      const table = state.table === undefined ? undefined : renderTable(state.table, style);
      state.table = undefined;
      const out = [table, last].filter((text) => text !== undefined).join("\n");
      state.fence = undefined;
      state.continuation = undefined;
      return out;
    },
    reset: () => {
      state.pending = "";
      state.fence = undefined;
      state.table = undefined;
      state.continuation = undefined;
    },
  };
}

/** Where a stream of Markdown stands between two pieces of it. */
type StreamState = {
  readonly style: Style;
  /** The code block the stream is in, by its opening marker (closed by a like marker at least as long). */
  fence: { marker: string } | undefined;
  /** The lines of a table (or of what may still turn out to be one) not shown yet. */
  table: string[] | undefined;
  /** The text of the current line not shown yet. */
  pending: string;
  /** How the rest of a line that was partly shown is rendered (its block is known by then). */
  continuation: ((text: string, before: string) => string) | undefined;
  /** The last character shown of a partly shown line (a word character before a marker changes what it means). */
  before: string;
};

/**
 * A complete line (or the rest of a partly shown one), rendered in its block; `undefined` while
 * it is held back as a table row. A line that ends a table comes after the table, rendered.
 */
function finishLine(state: StreamState, line: string): string | undefined {
  const { style } = state;
  if (state.table !== undefined && state.continuation === undefined) {
    // A table is its header row, a delimiter row, then rows; the first line alone is no table yet.
    if (isTableRow(line) && (state.table.length > 1 || isDelimiterRow(line))) {
      state.table.push(line);
      return undefined;
    }
    const table = renderTable(state.table, style);
    state.table = undefined;
    const after = finishLine(state, line);
    return after === undefined ? table : `${table}\n${after}`;
  }
  if (state.continuation !== undefined) {
    const rest = line === "" ? "" : state.continuation(line, state.before);
    state.continuation = undefined;
    return rest;
  }
  if (state.fence !== undefined) {
    if (closesFence(line, state.fence.marker)) {
      state.fence = undefined;
      return style.dim(visibleText(line.trim()));
    }
    return style.cyan(visibleText(line));
  }
  const opening = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/.exec(line);
  if (opening !== null && !(opening[1]!.startsWith("`") && line.slice(opening[0].length).includes("`"))) {
    state.fence = { marker: opening[1]! };
    return style.dim(visibleText(line.trim()));
  }
  if (isTableRow(line)) {
    state.table = [line];
    return undefined;
  }
  return renderLine(line, style, true).text;
}

/** The part of the unfinished line that can be shown already, if any. */
function partial(state: StreamState): string {
  const { style, pending, continuation } = state;
  if (state.fence !== undefined) {
    if (continuation === undefined && /^ {0,3}(`*|~*)$/.test(pending)) return "";
    const shown = style.cyan(visibleText(pending));
    state.continuation = (text) => style.cyan(visibleText(text));
    state.pending = "";
    return shown;
  }
  // Text held back this long waits for the end of its line (see safeCut): nothing to look at again.
  if (pending.length > maxHeldBack) return "";
  // A table (or a line that may start or end one) is shown whole, once its block is known.
  if (state.table !== undefined || (continuation === undefined && /^ {0,3}\|/.test(pending))) return "";
  if (continuation === undefined && /^ {0,3}(`|~)/.test(pending)) return "";
  const cut = safeCut(pending, continuation === undefined);
  if (cut === 0) return "";
  const part = pending.slice(0, cut);
  state.pending = pending.slice(cut);
  const shown = continuation !== undefined ? continuation(part, state.before) : renderLine(part, style, false);
  state.before = part.at(-1)!;
  if (typeof shown === "string") return shown;
  state.continuation = shown.rest;
  return shown.text;
}

/** `text` (whole Markdown) rendered for the terminal, as `markdownRenderer` renders it. */
export function renderMarkdown(text: string, style: Style): string {
  // Every line complete, so each is rendered whole; a table at the end is shown by `end`.
  const renderer = markdownRenderer(style);
  const shown = renderer.push(`${text}\n`);
  const rest = renderer.end();
  return rest === "" ? shown.slice(0, -1) : shown + rest;
}

/** A row of a table: a line starting with a pipe (the form models write). */
function isTableRow(line: string): boolean {
  return /^ {0,3}\|.*\|\s*$/.test(line) || /^ {0,3}\|(.*[^\\])?\|/.test(line);
}

function isDelimiterRow(line: string): boolean {
  return /^ {0,3}\|?(\s*:?-+:?\s*\|)+\s*(:?-+:?\s*)?$/.test(line);
}

// The cells of a row: split at pipes that are not escaped or inside a code span, outer pipes dropped.
function tableCells(line: string): string[] {
  const cells: string[] = [];
  let cell = "";
  let code = "";
  const text = line.trim().replace(/^\|/, "");
  for (let index = 0; index < text.length; index++) {
    const character = text[index]!;
    if (character === "\\" && text[index + 1] === "|") {
      cell += "|";
      index++;
    } else if (character === "`") {
      let run = "`";
      while (text[index + 1] === "`") run += text[++index];
      code = code === "" ? run : code === run ? "" : code;
      cell += run;
    } else if (character === "|" && code === "") {
      cells.push(cell.trim());
      cell = "";
    } else cell += character;
  }
  if (cell.trim() !== "") cells.push(cell.trim());
  return cells;
}

const plain: Style = {
  bold: (text) => text,
  dim: (text) => text,
  italic: (text) => text,
  red: (text) => text,
  green: (text) => text,
  yellow: (text) => text,
  cyan: (text) => text,
};

// Lines held as a table, rendered with aligned columns (header bold, a rule under it, the
// delimiter row's alignment kept); lines that never became a table render as plain lines.
function renderTable(lines: readonly string[], style: Style): string {
  if (lines.length < 2 || !isDelimiterRow(lines[1]!))
    return lines.map((line) => renderLine(line, style, true).text).join("\n");
  const alignments = tableCells(lines[1]!).map((cell) =>
    cell.endsWith(":") ? (cell.startsWith(":") ? "center" : "right") : "left",
  );
  const rows = [lines[0]!, ...lines.slice(2)].map(tableCells);
  const columns = Math.max(alignments.length, ...rows.map((row) => row.length));
  const cell = (row: readonly string[], column: number, styled: Style): string => {
    const text = row[column] ?? "";
    return text.length > maxStyledLine ? visibleText(text) : renderInline(visibleText(text), styled);
  };
  const widths = Array.from({ length: columns }, (_, column) =>
    Math.max(1, ...rows.map((row) => displayWidth(cell(row, column, plain)))),
  );
  const pad = (text: string, column: number, shown: string): string => {
    const space = widths[column]! - displayWidth(shown);
    const alignment = alignments[column] ?? "left";
    const before = alignment === "right" ? space : alignment === "center" ? Math.floor(space / 2) : 0;
    return `${" ".repeat(before)}${text}${" ".repeat(space - before)}`;
  };
  const renderRow = (row: readonly string[], header: boolean): string =>
    widths
      .map((_, column) => {
        const text = cell(row, column, style);
        return pad(header ? style.bold(text) : text, column, cell(row, column, plain));
      })
      .join(style.dim(" │ "))
      .trimEnd();
  const rule = style.dim(widths.map((width) => "─".repeat(width)).join("─┼─"));
  return [renderRow(rows[0]!, true), rule, ...rows.slice(1).map((row) => renderRow(row, false))].join("\n");
}

// Columns a text takes in a terminal: wide East Asian characters and emoji take two.
function displayWidth(text: string): number {
  let width = 0;
  for (const { segment } of graphemes().segment(text))
    width +=
      /^[\u1100-\u115F\u2E80-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6]|^\p{Extended_Pictographic}/u.test(
        segment,
      )
        ? 2
        : 1;
  return width;
}

// Made at the first table, not at start: creating a segmenter loads ICU's break rules, tens of
// milliseconds of a start that shows no table yet (bench/cli-start.ts).
let segmenter: Intl.Segmenter | undefined;
const graphemes = (): Intl.Segmenter => (segmenter ??= new Intl.Segmenter());

function closesFence(line: string, marker: string): boolean {
  const match = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
  return match !== null && match[1]![0] === marker[0] && match[1]!.length >= marker.length;
}

// One line outside code blocks (`complete`), or its first part: its block marker, then its
// inline text. `rest` renders what follows on the same line.
function renderLine(
  line: string,
  style: Style,
  complete: boolean,
): { text: string; rest: (text: string, before: string) => string } {
  // Matching markers costs more than linear time in the worst case: a very long line stays plain.
  const inline = (text: string, before = ""): string =>
    text.length > maxStyledLine ? visibleText(text) : renderInline(visibleText(text), style, before);
  const heading = /^ {0,3}(#{1,6})\s+(.*)$/.exec(line);
  if (heading !== null) {
    const strong = (text: string, before = ""): string => style.bold(inline(text, before));
    return { text: strong(heading[2]!), rest: strong };
  }
  // A rule can only be told at the end of its line.
  if (complete && /^ {0,3}([-*_])( *\1){2,} *$/.test(line)) return { text: style.dim("─".repeat(40)), rest: inline };
  const quote = /^ {0,3}> ?(.*)$/.exec(line);
  if (quote !== null) return { text: `${style.dim("│")} ${inline(quote[1]!)}`, rest: inline };
  const bullet = /^(\s*)[-*+]\s+(?:\[([ xX])\]\s+)?(.*)$/.exec(line);
  if (bullet !== null) {
    const box = bullet[2] === undefined ? "" : bullet[2] === " " ? "☐ " : "☑ ";
    return { text: `${bullet[1]!}${style.dim("•")} ${box}${inline(bullet[3]!)}`, rest: inline };
  }
  const numbered = /^(\s*)(\d{1,9}[.)])\s+(.*)$/.exec(line);
  if (numbered !== null)
    return { text: `${numbered[1]!}${style.dim(numbered[2]!)} ${inline(numbered[3]!)}`, rest: inline };
  return { text: inline(line), rest: inline };
}

// Code spans first (nothing inside them is Markdown), then links, strong and emphasis. `before`:
// the character shown just before `text` on its line; only a word character changes how the
// markers read, so the text is rendered after it and it is taken off again (nothing styles a
// lone word character).
function renderInline(text: string, style: Style, before = ""): string {
  const context = /^\w$/.test(before) ? before : "";
  return renderInlineText(context + text, style).slice(context.length);
}

function renderInlineText(text: string, style: Style): string {
  let out = "";
  let last = 0;
  for (const span of text.matchAll(/(`+)(?!`)([^]*?[^`])\1(?!`)/g)) {
    out += renderEmphasis(text.slice(last, span.index), style);
    const code = span[2]!;
    out += style.cyan(/^ .* $/.test(code) ? code.slice(1, -1) : code);
    last = span.index + span[0].length;
  }
  return out + renderEmphasis(text.slice(last), style);
}

function renderEmphasis(text: string, style: Style): string {
  return text
    .replace(
      /\[([^\]\n]+)\]\(([^)\s]+)\)/g,
      (_, label: string, address: string) => `${label} ${style.dim(`(${address})`)}`,
    )
    .replace(
      /(\*\*|__)(?=\S)([^]*?\S)\1/g,
      (whole: string, marker: string, inner: string, offset: number, all: string) =>
        marker === "__" && isWordCharacter(all[offset - 1]) ? whole : style.bold(inner),
    )
    .replace(/~~(?=\S)([^]*?\S)~~/g, (_, inner: string) => style.dim(inner))
    .replace(
      /(^|[^\w*])\*(?=[^\s*])([^*]*?[^\s*])\*(?![\w*])/g,
      (_, before: string, inner: string) => `${before}${style.italic(inner)}`,
    )
    .replace(
      /(^|[^\w])_(?=[^\s_])([^_]*?[^\s_])_(?!\w)/g,
      (_, before: string, inner: string) => `${before}${style.italic(inner)}`,
    )
    .replace(/\\([\\`*_{}[\]()#+\-.!~|>])/g, "$1");
}

function isWordCharacter(character: string | undefined): boolean {
  return character !== undefined && /\w/.test(character);
}

// Where the unfinished line can be cut so that what comes before renders the same whatever
// follows: with no code span, strong, emphasis or link open before it, after a space or a
// letter, digit or plain punctuation (never after a marker, which could be the start of one).
// The first part of a line must say what block the line is: it starts with a letter, or has
// two words (the second may be a task box, `- [ ]`). Only the end and the last two word ends
// are tried, and only while the text held back is short: text whose markers stay open waits for
// the end of its line, so each piece of a stream costs little however long the line.
function safeCut(line: string, lineStart: boolean): number {
  if (line.length > maxHeldBack) return 0;
  if (lineStart && !/^\s*\p{L}/u.test(line) && !/\S\s+\S+\s/.test(line)) return 0;
  if (/[\p{L}\p{N}.,;:?'"]$/u.test(line) && allClosed(line)) return line.length;
  let tries = 2;
  for (let index = line.length - 1; index > 0 && tries > 0; index--) {
    if (line[index] !== " " || line[index - 1] === " ") continue;
    tries--;
    const part = line.slice(0, index + 1);
    if (lineStart && !/^\s*\p{L}/u.test(part) && !/\S\s+\S+\s/.test(part)) return 0;
    if (allClosed(part)) return index + 1;
  }
  return 0;
}

const maxHeldBack = 500;
const maxStyledLine = 4000;

function allClosed(text: string): boolean {
  const rest = text.replace(/(`+)(?!`)[^]*?[^`]\1(?!`)/g, "x");
  if (rest.includes("`")) return false;
  // What pairs up already is settled; a marker left that could still open something is not.
  const unpaired = rest
    .replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, "x")
    .replace(/(\*\*|__)(?=\S)([^]*?\S)\1/g, "x")
    .replace(/~~(?=\S)([^]*?\S)~~/g, "x")
    .replace(/(^|[^\w*])\*(?=[^\s*])([^*]*?[^\s*])\*(?![\w*])/g, "$1x")
    .replace(/(^|[^\w])_(?=[^\s_])([^_]*?[^\s_])_(?!\w)/g, "$1x");
  return !/\*(?=[^\s])|(?<!\w)__?(?=\S)|~~(?=\S)|\[|\]\(/.test(unpaired);
}
