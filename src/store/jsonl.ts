import { StoreError } from "./store-error.ts";

/** A JSON Lines file, parsed. */
export type JsonlContent = {
  /** The parsed lines, with their 1-based line numbers (blank lines are skipped). */
  records: { value: unknown; line: number }[];
  /** Bytes of the file up to and including its last "\n". */
  completeBytes: number;
  /**
   * The last line, when the file does not end with "\n". `torn`: it is not valid JSON, so it is
   * the start of a write cut short by a crash, and it is not in `records`. Otherwise it is a
   * complete line missing only its newline (a file written by hand), and it is in `records`.
   */
  tail: { line: number; bytes: number; torn: boolean } | undefined;
};

/**
 * Parses JSON Lines. Throws a `malformed` StoreError naming `path` and the line for any complete
 * line that is not valid JSON; only a last line without "\n" may be torn (see `tail`).
 */
export function parseJsonl(bytes: Buffer, path: string): JsonlContent {
  const records: JsonlContent["records"] = [];
  let start = 0;
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
    records.push({ value: JSON.parse(text), line });
  } catch {
    // Every line is written with its "\n" in one append, so a line without one that does not
    // parse is a write a crash cut short; nothing after it was ever written.
    tail.torn = true;
  }
  return { records, completeBytes: start, tail };
}

function parseLine(text: string, path: string, line: number): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new StoreError(`${path}:${line}: not valid JSON (${reason}); the file was left as it is`, { code: "malformed", path, line, cause: error });
  }
}
