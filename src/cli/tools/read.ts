import type { FileHandle } from "node:fs/promises";
import { filePart, imagePart, sniffBytes, sniffMediaType, type SniffedMedia } from "../../content-parts.ts";
import { describeBytes } from "../../loop/content-size.ts";
import { toolContent, type ToolContent } from "../../tools/tool-content.ts";
import { tool, type Tool } from "../../tools/tool.ts";

import { openInWorkspace, readAt } from "./workspace-file.ts";
import { resolveInWorkspace } from "./workspace-path.ts";
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
  /** Images (png, jpeg, gif, webp) larger than this are refused (default 5 MB, what Anthropic takes). */
  maxImageBytes?: number;
  /** PDFs larger than this are refused (default 10 MB: as base64 within every provider's request limit). */
  maxPdfBytes?: number;
};

/** The defaults of `ReadLimits`' media sizes; attachments use the same. */
export const mediaLimits = { maxImageBytes: 5 * 1024 * 1024, maxPdfBytes: 10 * 1024 * 1024 } as const;

/**
 * `read`: a text file of the workspace with line numbers (`     12\t<line>`), from `offset` (a
 * 1-based line) for `limit` lines; a note at the end says how to read on when more is left.
 * An image (png, jpeg, gif, webp) comes back as an image part and a PDF as a file part, with a
 * line naming it; which one a file is, its first bytes say, not its name. Refuses directories,
 * other binary files and files over their size limit with an error the model can act on. Marks a
 * text file as seen, which `edit` requires.
 */
export function readTool(workspace: Workspace, limits: ReadLimits = {}): Tool {
  const defaultLines = limits.defaultLines ?? 2000;
  const maxLineLength = limits.maxLineLength ?? 2000;
  const maxOutput = limits.maxOutput ?? 60_000;
  const maxFileBytes = limits.maxFileBytes ?? 20_000_000;
  const mediaMax = {
    maxImageBytes: limits.maxImageBytes ?? mediaLimits.maxImageBytes,
    maxPdfBytes: limits.maxPdfBytes ?? mediaLimits.maxPdfBytes,
  };
  return tool({
    name: "read",
    description:
      `Read a text file of the workspace. Lines come numbered ("<number>\\t<text>"; the number and tab are not part of the file). ` +
      `Shows ${defaultLines} lines unless you give limit; use offset (1-based line) and limit for big files. Read a file before you edit it. ` +
      `Images (png, jpeg, gif, webp) and PDFs are shown to you as they are (offset and limit do not apply).`,
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
      if (!target.exists) throw new Error(`${target.display} does not exist`);
      const file = await openInWorkspace(workspace.root, target, "read");
      try {
        const { stats } = file;
        if (stats.isDirectory()) throw new Error(`${target.display} is a directory; use list to see what is in it`);
        const media = sniffMediaType(await readAt(file.handle, 0, sniffBytes));
        if (media !== undefined) return await mediaContent(file.handle, stats.size, media, target.display, mediaMax);
        if (stats.size > maxFileBytes) {
          throw new Error(
            `${target.display} is too large to read (${stats.size} bytes); use grep, or bash with head/sed to see part of it`,
          );
        }
        if (isBinary(await readAt(file.handle, 0, 8192)))
          throw new Error(`${target.display} is a binary file (${stats.size} bytes); read shows text files only`);
        const text = await numberedLines(file.handle, stats.size, {
          offset,
          limit,
          maxLineLength,
          maxOutput,
          display: target.display,
          signal,
        });
        workspace.seen.record(target.absolute, stats);
        return text;
      } finally {
        await file.close();
      }
    },
  });
}

/**
 * An image or a PDF of `size` bytes as the model is shown it: a line naming it, then the part.
 * Throws an Error saying the limit when it is larger.
 */
export async function mediaContent(
  handle: FileHandle,
  size: number,
  media: SniffedMedia,
  display: string,
  limits: { maxImageBytes: number; maxPdfBytes: number },
): Promise<ToolContent> {
  const isPdf = media === "application/pdf";
  const limit = isPdf ? limits.maxPdfBytes : limits.maxImageBytes;
  if (size > limit) {
    throw new Error(
      `${display} is ${isPdf ? "a PDF" : `an image (${media})`} of ${describeBytes(size)}, over the ${describeBytes(limit)} ` +
        `that can be shown; ${isPdf ? "use bash (pdftotext, say) to read its text" : "use bash to make a smaller copy and read that"}`,
    );
  }
  const bytes = await readAt(handle, 0, size);
  const name = display.split("/").at(-1) ?? display;
  return toolContent([
    { type: "text", text: `${display}: ${media}, ${describeBytes(bytes.length)}` },
    isPdf ? filePart(bytes, media, name) : imagePart(bytes, media),
  ]);
}

/** A NUL byte in the first 8 KB, as git decides: text files practically never have one. */
export function isBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8192).includes(0);
}

type Window = {
  offset: number;
  limit: number;
  maxLineLength: number;
  maxOutput: number;
  display: string;
  signal: AbortSignal;
};

/** The lines of `window` in a file of `size` bytes, numbered, with a note saying where to read on when more follow. */
async function numberedLines(handle: FileHandle, size: number, window: Window): Promise<string> {
  const { kept, total } = await scanLines(handle, size, window);
  if (total === 0) return `(${window.display} is empty)`;
  if (window.offset > total)
    throw new Error(`offset ${window.offset} is past the end of ${window.display} (${total} lines)`);
  return numbered(kept, total, window);
}

// The file is scanned in chunks up to the size that was checked: only the lines of the window are
// decoded and kept (each cut to `maxLineLength`, and no more of them than `maxOutput` can show);
// the others are only counted.
async function scanLines(handle: FileHandle, size: number, window: Window): Promise<{ kept: string[]; total: number }> {
  const { offset, limit, maxLineLength, maxOutput } = window;
  // Enough bytes for `maxLineLength` characters however they are encoded, and one more.
  const keepBytes = 4 * (maxLineLength + 1);
  const kept: string[] = [];
  let keptSize = 0;
  let line = 1;
  let current: Buffer[] = [];
  let currentSize = 0;
  let pending = false;
  let collecting = true;
  const finish = (ended: boolean): void => {
    if (collecting && line >= offset && line < offset + limit) {
      let text = Buffer.concat(current).toString("utf8");
      if (ended && currentSize <= keepBytes) text = text.replace(/\r$/, "");
      if (text.length > maxLineLength)
        text = `${text.slice(0, maxLineLength)}… [line cut at ${maxLineLength} characters]`;
      kept.push(text);
      // Each numbered line is at least its text, a number and a tab: past the budget, no more can be shown.
      keptSize += text.length + 8;
      if (keptSize > maxOutput) collecting = false;
    }
    current = [];
    currentSize = 0;
    pending = false;
    line++;
  };
  for (let position = 0; position < size;) {
    window.signal.throwIfAborted();
    const chunk = await readAt(handle, position, Math.min(65_536, size - position));
    if (chunk.length === 0) break;
    position += chunk.length;
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(10, start);
      const end = newline === -1 ? chunk.length : newline;
      if (end > start) pending = true;
      if (collecting && line >= offset && line < offset + limit && currentSize < keepBytes + 1) {
        const piece = chunk.subarray(start, Math.min(end, start + keepBytes + 1 - currentSize));
        current.push(piece);
        currentSize += piece.length;
      }
      if (newline === -1) break;
      finish(true);
      start = newline + 1;
    }
  }
  // A final newline ends the last line; it does not start another one.
  if (pending) finish(false);
  return { kept, total: line - 1 };
}

// Numbered from `offset` while the output stays within `maxOutput` (the first line always shows).
function numbered(kept: readonly string[], total: number, window: Window): string {
  const { offset, limit, maxOutput } = window;
  const width = String(Math.min(total, offset + limit - 1)).length;
  const shown: string[] = [];
  let shownSize = 0;
  let next = offset;
  for (; next < offset + limit && next <= total; next++) {
    const text = kept[next - offset];
    if (text === undefined) break;
    const line = `${String(next).padStart(Math.max(width, 6))}\t${text}`;
    if (shown.length > 0 && shownSize + line.length > maxOutput) break;
    shown.push(line);
    shownSize += line.length + 1;
  }
  if (next <= total) shown.push(`\n[lines ${offset}-${next - 1} of ${total}; read on with offset=${next}]`);
  return shown.join("\n");
}
