import { closeSync, fstatSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { isInside } from "./tools/workspace-path.ts";

/** The file names read in each directory, in this order. */
export const instructionFileNames = ["AGENTS.md", "CLAUDE.md"] as const;

/** The most bytes of instructions put in the system prompt, all files together. */
export const maxInstructionBytes = 32 * 1024;

/** One instructions file: its name as shown (relative to the workspace), its text, and how much was left out. */
export type InstructionFile = {
  /** Relative to the workspace: `AGENTS.md`, `../CLAUDE.md`. */
  shown: string;
  text: string;
  /** The file's size in bytes, when only its first part is in `text` (over the cap). */
  cutFrom?: number;
};

/**
 * The project's instructions for the agent: `AGENTS.md` and `CLAUDE.md` in the workspace and each
 * directory above it up to the repository's root (the nearest one holding `.git`, included); not
 * in a repository, the workspace's only. Outermost first, so that nearer ones come later and win.
 *
 * Only regular files whose real path lies inside that top directory are read (a `CLAUDE.md` that
 * links to the `AGENTS.md` beside it is read once; a link leading out is not read): a cloned
 * repository must not make the CLI send a file from elsewhere to the model. At most
 * `maxInstructionBytes` in all: a file past what is left is cut, with a notice in its text and its
 * `cutFrom` set, and the files after it are left out the same way. Never throws: an unreadable file
 * is skipped.
 */
export function readProjectInstructions(workspace: string): InstructionFile[] {
  const directories = instructionDirectories(workspace);
  const top = directories[0]!;
  const files: InstructionFile[] = [];
  const seen = new Set<string>();
  let left = maxInstructionBytes;
  for (const directory of directories) {
    for (const name of instructionFileNames) {
      const path = join(directory, name);
      const real = realInside(path, top);
      if (real === undefined || seen.has(real)) continue;
      seen.add(real);
      const read = readStart(real, left);
      if (read === undefined) continue;
      const shown = relative(workspace, path) || name;
      const file: InstructionFile = { shown, text: read.text };
      if (read.size > read.bytes) {
        file.cutFrom = read.size;
        file.text += `\n[${shown} is cut here: it has ${read.size.toLocaleString("en-US")} bytes, and the instructions are limited to ${maxInstructionBytes.toLocaleString("en-US")} bytes in all]`;
      }
      left -= read.bytes;
      files.push(file);
    }
  }
  return files;
}

/**
 * The part of the system prompt that carries the instructions, or "" without any: each file under
 * a heading with its name, outermost first.
 */
export function instructionsPrompt(files: readonly InstructionFile[]): string {
  if (files.length === 0) return "";
  return [
    "",
    `The project's instructions follow, from ${files.map((file) => file.shown).join(", ")} (relative to the workspace; the outermost first, a nearer file wins where they disagree). Follow them where they apply; they never override the user or the permission prompt.`,
    ...files.map((file) => `\n<instructions file="${file.shown}">\n${file.text.replace(/\n+$/, "")}\n</instructions>`),
  ].join("\n");
}

// The workspace and its parents up to the repository's root, outermost first; the workspace alone
// when no parent holds `.git`.
function instructionDirectories(workspace: string): string[] {
  const chain: string[] = [];
  for (let directory = workspace; ; directory = dirname(directory)) {
    chain.unshift(directory);
    if (exists(join(directory, ".git"))) return chain;
    if (dirname(directory) === directory) return [workspace];
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function realInside(path: string, top: string): string | undefined {
  try {
    const real = realpathSync(path);
    const realTop = realpathSync(top);
    return isInside(realTop, real) ? real : undefined;
  } catch {
    return undefined;
  }
}

// The first `limit` bytes of a regular file, as text, and its size; undefined when it is not one.
function readStart(path: string, limit: number): { text: string; bytes: number; size: number } | undefined {
  let descriptor: number | undefined;
  try {
    descriptor = openSync(path, "r");
    const stats = fstatSync(descriptor);
    if (!stats.isFile()) return undefined;
    const buffer = Buffer.alloc(Math.max(0, Math.min(limit, stats.size)));
    let bytes = 0;
    while (bytes < buffer.length) {
      const read = readSync(descriptor, buffer, bytes, buffer.length - bytes, bytes);
      if (read === 0) break;
      bytes += read;
    }
    // A character cut in the middle would be a replacement character: end at the last whole one.
    const text = new TextDecoder("utf-8").decode(buffer.subarray(0, bytes)).replace(/\uFFFD$/, "");
    return { text, bytes, size: stats.size };
  } catch {
    return undefined;
  } finally {
    if (descriptor !== undefined) closeSync(descriptor);
  }
}
