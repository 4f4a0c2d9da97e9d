import { stat } from "node:fs/promises";
import { tool, type Tool } from "../../tools/tool.ts";
import { globMatcher } from "./glob.ts";
import { lineMatcher, type LineMatcher } from "./line-matcher.ts";
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
        glob: {
          type: "string",
          description: "Only files whose path matches this glob; a glob without / matches file names.",
        },
        ignoreCase: { type: "boolean", description: "Match case-insensitively." },
        maxResults: {
          type: "integer",
          minimum: 1,
          maximum: maxResults,
          description: `At most this many matches. Default ${Math.min(100, maxResults)}.`,
        },
      },
      required: ["pattern"],
      additionalProperties: false,
    },
    handler: (input, { signal }) =>
      grep(workspace, input as GrepInput, { maxResults, maxFileBytes, timeoutMs }, signal),
  });
}

type GrepInput = { pattern: string; path?: string; glob?: string; ignoreCase?: boolean; maxResults?: number };

async function grep(
  workspace: Workspace,
  input: GrepInput,
  limits: Required<GrepLimits>,
  signal: AbortSignal,
): Promise<string> {
  const { maxResults, maxFileBytes, timeoutMs } = limits;
  let regex: RegExp;
  try {
    regex = new RegExp(input.pattern, input.ignoreCase === true ? "i" : "");
  } catch (error) {
    throw new Error(`invalid regular expression: ${(error as Error).message}`, { cause: error });
  }
  const cap = Math.min(input.maxResults ?? Math.min(100, maxResults), maxResults);
  const include = globFilter(input.glob);
  const target = await resolveInWorkspace(workspace.root, input.path ?? ".");
  if (!target.exists) throw new Error(`${target.display} does not exist`);
  const files = (await stat(target.absolute)).isDirectory()
    ? filesUnder(workspace.root, target.absolute, signal)
    : single(target.absolute, target.display);
  const matcher = lineMatcher(regex, { timeoutMs, signal });
  let found: Found;
  try {
    found = await search(workspace.root, files, matcher, { cap, maxFileBytes, include });
  } finally {
    await matcher.close();
  }
  const { matches, skipped, more } = found;
  const notes = [...skipped].map(([reason, paths]) => skipNote(reason, paths, maxFileBytes));
  if (matches.length === 0) return ["No matches.", ...notes].join("\n");
  if (more) matches.push(`[stopped at ${cap} matches; there are more: narrow the pattern, path or glob]`);
  return [...matches, ...notes].join("\n");
}

/** What a search found: up to `cap` lines as `path:line: text`, the files skipped by why, and whether there were more matches. */
type Found = { matches: string[]; skipped: Map<SkipReason, string[]>; more: boolean };

/** `cap`: the most matches; `include`: which files to search (default all). */
type SearchLimits = { cap: number; maxFileBytes: number; include: ((file: Candidate) => boolean) | undefined };

async function search(
  root: string,
  files: AsyncIterable<Candidate>,
  matcher: LineMatcher,
  limits: SearchLimits,
): Promise<Found> {
  const { cap } = limits;
  const found: Found = { matches: [], skipped: new Map(), more: false };
  for await (const file of files) {
    if (limits.include !== undefined && !limits.include(file)) continue;
    const text = await textOf(root, file, limits.maxFileBytes);
    if (typeof text !== "string") {
      if (text !== undefined)
        found.skipped.set(text.skip, [...(found.skipped.get(text.skip) ?? []), file.relativePath]);
      continue;
    }
    // One more than still fits says whether there are more.
    for (const { line, text: matched } of await matcher.match(text, cap - found.matches.length + 1)) {
      if (found.matches.length >= cap) {
        found.more = true;
        return found;
      }
      found.matches.push(`${file.relativePath}:${line}: ${matched}`);
    }
  }
  return found;
}

/** Whether a file's path is one the call asked for; `undefined`: every file. */
function globFilter(pattern: string | undefined): ((file: Candidate) => boolean) | undefined {
  if (pattern === undefined) return undefined;
  const glob = globMatcher(pattern);
  // A glob without a directory part names files wherever they are.
  const onName = !pattern.includes("/");
  return (file) => glob(onName ? file.relativePath.slice(file.relativePath.lastIndexOf("/") + 1) : file.relativePath);
}

type SkipReason = "large" | "not-regular" | "hard-links";

type Candidate = { path: string; relativePath: string };

// The text of a file to search: its size and kind are checked on the opened descriptor before
// anything is read. Binary files and files gone or swapped meanwhile are left out silently.
async function textOf(
  root: string,
  file: Candidate,
  maxFileBytes: number,
): Promise<string | { skip: SkipReason } | undefined> {
  let opened;
  try {
    opened = await openInWorkspace(root, { absolute: file.path, display: file.relativePath, exists: true }, "read");
  } catch (error) {
    if (error instanceof WorkspaceFileError && (error.reason === "not-regular" || error.reason === "hard-links"))
      return { skip: error.reason };
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
  if (reason === "large")
    return `[skipped ${files} larger than ${maxFileBytes} bytes (search them with bash: grep -n): ${listed}]`;
  if (reason === "not-regular")
    return `[skipped ${files} that ${paths.length === 1 ? "is" : "are"} not regular (FIFO, socket or device): ${listed}]`;
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
