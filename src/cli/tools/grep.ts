import { stat } from "node:fs/promises";
import { tool, type Tool } from "../../tools/tool.ts";
import { globMatcher } from "./glob.ts";
import { lineMatcher } from "./line-matcher.ts";
import { isBinary } from "./read.ts";
import { walk } from "./walk.ts";
import { openInWorkspace, readAt, WorkspaceFileError } from "./workspace-file.ts";
import { resolveInWorkspace } from "./workspace-path.ts";
import type { Workspace } from "./workspace.ts";

/** Limits of the `grep` tool; the defaults suit a model's context. */
export type GrepLimits = {
  /** The most matches one call returns (default 200; a call may ask for fewer, default 100). */
  maxResults?: number;
  /** Files larger than this many bytes are skipped with a note, before any byte is read (default 2 MB). */
  maxFileBytes?: number;
  /** Milliseconds the pattern may spend matching in one call before it is stopped (default 10 s). */
  timeoutMs?: number;
};

/**
 * `grep`: lines matching a regular expression (JavaScript syntax) in the workspace's text files,
 * as `path:line: text`, optionally under one path and for files matching a glob. Skips `.git`,
 * `node_modules`, symbolic links and binary files; skips with a note files larger than
 * `maxFileBytes` (their size is checked before they are read), files that are not regular (a
 * FIFO, a device) and files with several hard links. The pattern runs in a worker thread
 * (`lineMatcher`): a pattern that takes longer than `timeoutMs`, or an abort, stops the search
 * with an error result. At most `maxResults` matches (the call may ask for fewer), with a note
 * when there are more.
 */
export function grepTool(workspace: Workspace, limits: GrepLimits = {}): Tool {
  const maxResults = limits.maxResults ?? 200;
  const maxFileBytes = limits.maxFileBytes ?? 2_000_000;
  const timeoutMs = limits.timeoutMs ?? 10_000;
  return tool({
    name: "grep",
    description:
      "Search the workspace's text files for lines matching a regular expression (JavaScript syntax). Returns path:line: text. " +
      "Skips .git and node_modules. Narrow it with path (a file or directory) and glob (e.g. *.ts or src/**/*.test.ts).",
    inputSchema: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "A regular expression." },
        path: { type: "string", description: 'A file or directory to search, relative to the workspace. Default ".".' },
        glob: { type: "string", description: "Only files whose path matches this glob; a glob without / matches file names." },
        ignoreCase: { type: "boolean", description: "Match case-insensitively." },
        maxResults: { type: "integer", minimum: 1, maximum: maxResults, description: `At most this many matches. Default ${Math.min(100, maxResults)}.` },
      },
      required: ["pattern"],
      additionalProperties: false,
    },
    handler: async (input, { signal }) => {
      const options = input as { pattern: string; path?: string; glob?: string; ignoreCase?: boolean; maxResults?: number };
      let regex: RegExp;
      try {
        regex = new RegExp(options.pattern, options.ignoreCase === true ? "i" : "");
      } catch (error) {
        throw new Error(`invalid regular expression: ${(error as Error).message}`, { cause: error });
      }
      const cap = Math.min(options.maxResults ?? Math.min(100, maxResults), maxResults);
      const glob = options.glob === undefined ? undefined : globMatcher(options.glob);
      // A glob without a directory part names files wherever they are.
      const globOnName = options.glob !== undefined && !options.glob.includes("/");
      const target = await resolveInWorkspace(workspace.root, options.path ?? ".");
      if (!target.exists) throw new Error(`${target.display} does not exist`);
      const files = (await stat(target.absolute)).isDirectory()
        ? filesUnder(workspace.root, target.absolute, signal)
        : single(target.absolute, target.display);
      const matches: string[] = [];
      const skipped = new Map<SkipReason, string[]>();
      let more = false;
      const matcher = lineMatcher(regex, { timeoutMs, signal });
      try {
        for await (const file of files) {
          if (glob !== undefined && !glob(globOnName ? file.relativePath.slice(file.relativePath.lastIndexOf("/") + 1) : file.relativePath)) continue;
          const text = await textOf(workspace.root, file, maxFileBytes);
          if (typeof text !== "string") {
            if (text !== undefined) skipped.set(text.skip, [...(skipped.get(text.skip) ?? []), file.relativePath]);
            continue;
          }
          // One more than still fits says whether there are more.
          const found = await matcher.match(text, cap - matches.length + 1);
          for (const { line, text: matched } of found) {
            if (matches.length >= cap) {
              more = true;
              break;
            }
            matches.push(`${file.relativePath}:${line}: ${matched}`);
          }
          if (more) break;
        }
      } finally {
        await matcher.close();
      }
      const notes = [...skipped].map(([reason, paths]) => skipNote(reason, paths, maxFileBytes));
      if (matches.length === 0) return ["No matches.", ...notes].join("\n");
      if (more) matches.push(`[stopped at ${cap} matches; there are more: narrow the pattern, path or glob]`);
      return [...matches, ...notes].join("\n");
    },
  });
}

type SkipReason = "large" | "not-regular" | "hard-links";

type Candidate = { path: string; relativePath: string };

// The text of a file to search: its size and kind are checked on the opened descriptor before
// anything is read. Binary files and files gone or swapped meanwhile are left out silently.
async function textOf(root: string, file: Candidate, maxFileBytes: number): Promise<string | { skip: SkipReason } | undefined> {
  let opened;
  try {
    opened = await openInWorkspace(root, { absolute: file.path, display: file.relativePath, exists: true }, "read");
  } catch (error) {
    if (error instanceof WorkspaceFileError && (error.reason === "not-regular" || error.reason === "hard-links")) return { skip: error.reason };
    return undefined;
  }
  try {
    if (!opened.stats.isFile()) return undefined;
    if (opened.stats.size > maxFileBytes) return { skip: "large" };
    const bytes = await readAt(opened.handle, 0, opened.stats.size);
    return isBinary(bytes) ? undefined : bytes.toString("utf8");
  } catch {
    return undefined;
  } finally {
    await opened.close();
  }
}

function skipNote(reason: SkipReason, paths: string[], maxFileBytes: number): string {
  const files = paths.length === 1 ? "1 file" : `${paths.length} files`;
  const listed = paths.slice(0, 5).join(", ") + (paths.length > 5 ? `, and ${paths.length - 5} more` : "");
  if (reason === "large") return `[skipped ${files} larger than ${maxFileBytes} bytes (search them with bash: grep -n): ${listed}]`;
  if (reason === "not-regular") return `[skipped ${files} that ${paths.length === 1 ? "is" : "are"} not regular (FIFO, socket or device): ${listed}]`;
  return `[skipped ${files} with several hard links: ${listed}]`;
}

async function* filesUnder(root: string, directory: string, signal: AbortSignal): AsyncGenerator<Candidate> {
  for await (const entry of walk(root, directory, { maxDepth: Number.POSITIVE_INFINITY, signal })) {
    if (entry.kind === "file" || entry.kind === "other") yield entry;
  }
}

async function* single(path: string, relativePath: string): AsyncGenerator<Candidate> {
  yield { path, relativePath };
}

