import { readFile, stat } from "node:fs/promises";
import { tool, type Tool } from "../../tools.ts";
import { globToRegExp } from "./glob.ts";
import { isBinary } from "./read.ts";
import { walk } from "./walk.ts";
import { resolveInWorkspace } from "./workspace-path.ts";
import type { Workspace } from "./workspace.ts";

/**
 * `grep`: lines matching a regular expression (JavaScript syntax) in the workspace's text files,
 * as `path:line: text`, optionally under one path and for files matching a glob. Skips `.git`,
 * `node_modules`, symbolic links, binary and very large files. At most `maxResults` matches (the
 * call may ask for fewer), with a note when there are more.
 */
export function grepTool(workspace: Workspace, limits: { maxResults?: number; maxFileBytes?: number } = {}): Tool {
  const maxResults = limits.maxResults ?? 200;
  const maxFileBytes = limits.maxFileBytes ?? 2_000_000;
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
      const glob = options.glob === undefined ? undefined : globToRegExp(options.glob);
      // A glob without a directory part names files wherever they are.
      const globOnName = options.glob !== undefined && !options.glob.includes("/");
      const target = await resolveInWorkspace(workspace.root, options.path ?? ".");
      if (!target.exists) throw new Error(`${target.display} does not exist`);
      const files = (await stat(target.absolute)).isDirectory()
        ? filesUnder(workspace.root, target.absolute, signal)
        : single(target.absolute, target.display);
      const matches: string[] = [];
      let more = false;
      search: for await (const file of files) {
        if (glob !== undefined && !glob.test(globOnName ? file.relativePath.slice(file.relativePath.lastIndexOf("/") + 1) : file.relativePath)) continue;
        const bytes = await readFile(file.path).catch(() => undefined);
        if (bytes === undefined || bytes.length > maxFileBytes || isBinary(bytes)) continue;
        const lines = bytes.toString("utf8").split(/\r?\n/);
        for (const [index, line] of lines.entries()) {
          if (!regex.test(line)) continue;
          if (matches.length >= cap) {
            more = true;
            break search;
          }
          matches.push(`${file.relativePath}:${index + 1}: ${line.length > 300 ? `${line.slice(0, 300)}…` : line}`);
        }
      }
      if (matches.length === 0) return "No matches.";
      if (more) matches.push(`[stopped at ${cap} matches; there are more: narrow the pattern, path or glob]`);
      return matches.join("\n");
    },
  });
}

async function* filesUnder(root: string, directory: string, signal: AbortSignal): AsyncGenerator<{ path: string; relativePath: string }> {
  for await (const entry of walk(root, directory, { maxDepth: Number.POSITIVE_INFINITY, signal })) {
    if (entry.kind === "file") yield entry;
  }
}

async function* single(path: string, relativePath: string): AsyncGenerator<{ path: string; relativePath: string }> {
  yield { path, relativePath };
}
