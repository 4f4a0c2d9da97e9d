import { readFile, stat } from "node:fs/promises";
import { tool, type Tool } from "../../tools.ts";
import { codeOf, resolveInWorkspace } from "./workspace-path.ts";
import type { Workspace } from "./workspace.ts";

/** Limits of one `read` call; the defaults suit a model's context. */
export type ReadLimits = {
  /** Lines shown when the call gives no `limit` (default 2000). */
  defaultLines?: number;
  /** Characters of one line beyond which it is cut (default 2000). */
  maxLineLength?: number;
  /** Characters of output beyond which the remaining lines are left for another call (default 60,000). */
  maxOutput?: number;
  /** Files larger than this many bytes are refused (default 20 MB). */
  maxFileBytes?: number;
};

/**
 * `read`: a text file of the workspace with line numbers (`     12\t<line>`), from `offset` (a
 * 1-based line) for `limit` lines; a note at the end says how to read on when more is left.
 * Refuses directories, binary files and huge files with an error the model can act on. Marks the
 * file as seen, which `edit` requires.
 */
export function readTool(workspace: Workspace, limits: ReadLimits = {}): Tool {
  const defaultLines = limits.defaultLines ?? 2000;
  const maxLineLength = limits.maxLineLength ?? 2000;
  const maxOutput = limits.maxOutput ?? 60_000;
  const maxFileBytes = limits.maxFileBytes ?? 20_000_000;
  return tool({
    name: "read",
    description:
      `Read a text file of the workspace. Lines come numbered ("<number>\\t<text>"; the number and tab are not part of the file). ` +
      `Shows ${defaultLines} lines unless you give limit; use offset (1-based line) and limit for big files. Read a file before you edit it.`,
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path relative to the workspace." },
        offset: { type: "integer", minimum: 1, description: "First line to show (1-based). Default 1." },
        limit: { type: "integer", minimum: 1, description: `How many lines to show. Default ${defaultLines}.` },
      },
      required: ["path"],
      additionalProperties: false,
    },
    handler: async (input, { signal }) => {
      // The loop has validated the input against the schema above.
      const { path, offset = 1, limit = defaultLines } = input as { path: string; offset?: number; limit?: number };
      const target = await resolveInWorkspace(workspace.root, path);
      const stats = await statOrExplain(target.absolute, target.display);
      if (stats.isDirectory()) throw new Error(`${target.display} is a directory; use list to see what is in it`);
      if (stats.size > maxFileBytes) {
        throw new Error(`${target.display} is too large to read (${stats.size} bytes); use grep, or bash with head/sed to see part of it`);
      }
      const bytes = await readFile(target.absolute, { signal });
      if (isBinary(bytes)) throw new Error(`${target.display} is a binary file (${bytes.length} bytes); read shows text files only`);
      workspace.seen.record(target.absolute, stats);
      return numberedLines(bytes.toString("utf8"), offset, limit, { maxLineLength, maxOutput, display: target.display });
    },
  });
}

/** A NUL byte in the first 8 KB, as git decides: text files practically never have one. */
export function isBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8192).includes(0);
}

async function statOrExplain(path: string, display: string) {
  try {
    return await stat(path);
  } catch (error) {
    if (codeOf(error) === "ENOENT" || codeOf(error) === "ENOTDIR") throw new Error(`${display} does not exist`, { cause: error });
    throw error;
  }
}

function numberedLines(text: string, offset: number, limit: number, options: { maxLineLength: number; maxOutput: number; display: string }): string {
  if (text === "") return `(${options.display} is empty)`;
  const lines = text.split(/\r?\n/);
  // A final newline ends the last line; it does not start another one.
  if (lines.at(-1) === "") lines.pop();
  const total = lines.length;
  if (offset > total) throw new Error(`offset ${offset} is past the end of ${options.display} (${total} lines)`);
  const width = String(Math.min(total, offset + limit - 1)).length;
  const shown: string[] = [];
  let size = 0;
  let next = offset;
  for (; next < offset + limit && next <= total; next++) {
    let line = lines[next - 1]!;
    if (line.length > options.maxLineLength) line = `${line.slice(0, options.maxLineLength)}… [line cut at ${options.maxLineLength} characters]`;
    const numbered = `${String(next).padStart(Math.max(width, 6))}\t${line}`;
    if (shown.length > 0 && size + numbered.length > options.maxOutput) break;
    shown.push(numbered);
    size += numbered.length + 1;
  }
  if (next <= total) shown.push(`\n[lines ${offset}-${next - 1} of ${total}; read on with offset=${next}]`);
  return shown.join("\n");
}
