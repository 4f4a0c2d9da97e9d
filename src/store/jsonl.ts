import { jsonNestedDeeperThan, maxJsonDepth } from "../session.ts";
import { StoreError } from "./store-error.ts";

/** A JSON Lines file, parsed. */
export type JsonlContent = {
  /** The parsed lines, with their 1-based line numbers (blank lines are skipped). */
  records: { value: unknown; line: number }[];
  /** Bytes of the file up to and including its last "\n" (a leading byte-order mark counts). */
  completeBytes: number;
  /**
   * The last line, when the file does not end with "\n". `torn`: it is the start of a JSON value
   * that ends too early (what a write cut short by a crash leaves), and it is not in `records`.
   * Otherwise it is a complete line missing only its newline (a file written by hand), and it is
   * in `records`. A last line that is neither (invalid JSON before its end) is `malformed`.
   */
  tail: { line: number; bytes: number; torn: boolean } | undefined;
};

/**
 * Parses JSON Lines. A UTF-8 byte-order mark at the start is skipped (editors on Windows write
 * one). Throws a `malformed` StoreError naming `path` and the line for any line that is not valid
 * JSON, except a last line without "\n" that is provably torn (see `tail`): only that may be cut.
 */
export function parseJsonl(bytes: Buffer, path: string): JsonlContent {
  const records: JsonlContent["records"] = [];
  let start = hasByteOrderMark(bytes) ? 3 : 0;
  let line = 0;
  for (let end = bytes.indexOf(10, start); end !== -1; start = end + 1, end = bytes.indexOf(10, start)) {
    line++;
    const text = bytes.toString("utf8", start, end);
    if (text.trim() === "") continue;
    records.push({ value: parseLine(text, path, line), line });
  }
  if (start === bytes.length) return { records, completeBytes: start, tail: undefined };
  line++;
  const text = bytes.toString("utf8", start);
  const tail = { line, bytes: bytes.length - start, torn: false };
  if (text.trim() === "") return { records, completeBytes: start, tail };
  try {
    records.push({ value: JSON.parse(tooDeepRefused(text, path, line)), line });
  } catch (error) {
    if (error instanceof StoreError) throw error;
    // Every line is written with its "\n" in one append, so a line without one whose JSON stops
    // short is a write a crash cut short; nothing after it was ever written. JSON that is wrong
    // before its end was not written by us that way: it is reported, never cut.
    if (!endsTooEarly(error, text)) parseLine(text, path, line);
    tail.torn = true;
  }
  return { records, completeBytes: start, tail };
}

function hasByteOrderMark(bytes: Buffer): boolean {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

// Whether JSON.parse failed only because the text ended: the text is the beginning of a JSON
// value. The position V8 reports is where it stopped; a write cut inside a multi-byte character
// decodes to a replacement character, still inside the unterminated string.
function endsTooEarly(error: unknown, text: string): boolean {
  const message = error instanceof Error ? error.message : "";
  if (message.includes("end of JSON input")) return true;
  const position = /at position (\d+)/.exec(message);
  return position !== null && Number(position[1]) >= text.trimEnd().length && text.trimStart().startsWith("{");
}

function parseLine(text: string, path: string, line: number): unknown {
  try {
    return JSON.parse(tooDeepRefused(text, path, line));
  } catch (error) {
    if (error instanceof StoreError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new StoreError(`${path}:${line}: not valid JSON (${reason}); the file was left as it is`, {
      code: "malformed",
      path,
      line,
      cause: error,
    });
  }
}

// Nesting no session value has: parsed, it would fail as a bare RangeError wherever it is copied or written.
function tooDeepRefused(text: string, path: string, line: number): string {
  if (!jsonNestedDeeperThan(text)) return text;
  throw new StoreError(`${path}:${line}: nested more than ${maxJsonDepth} levels deep; the file was left as it is`, {
    code: "malformed",
    path,
    line,
  });
}
