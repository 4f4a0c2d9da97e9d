import { stat } from "node:fs/promises";
import { tool, type Tool } from "../../tools/tool.ts";
import { walk } from "./walk.ts";
import { resolveInWorkspace } from "./workspace-path.ts";
import type { Workspace } from "./workspace.ts";

/**
 * `list`: a directory of the workspace as an indented tree, directories first (`name/`), to
 * `depth` levels (default 2). It does not enter `.git` or `node_modules` (shown, marked) nor
 * follow symbolic links (shown as `name@`); past `maxEntries` it stops with a note.
 */
export function listTool(workspace: Workspace, limits: { maxEntries?: number } = {}): Tool {
  const maxEntries = limits.maxEntries ?? 500;
  return tool({
    name: "list",
    description:
      "List a directory of the workspace as a tree (directories end with /). Does not enter .git or node_modules.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: 'Directory relative to the workspace. Default ".".' },
        depth: { type: "integer", minimum: 1, maximum: 10, description: "How many levels to show. Default 2." },
      },
      additionalProperties: false,
    },
    handler: async (input, { signal }) => {
      const { path = ".", depth = 2 } = input as { path?: string; depth?: number };
      const target = await resolveInWorkspace(workspace.root, path);
      if (!target.exists) throw new Error(`${target.display} does not exist`);
      if (!(await stat(target.absolute)).isDirectory())
        throw new Error(`${target.display} is a file, not a directory; use read to see it`);
      const lines: string[] = [];
      let more = 0;
      for await (const entry of walk(workspace.root, target.absolute, { maxDepth: depth, signal })) {
        if (lines.length >= maxEntries) {
          more++;
          continue;
        }
        const suffix = entry.kind === "directory" ? "/" : entry.kind === "symlink" ? "@" : "";
        const note = entry.notEntered === "skipped" ? " (not listed)" : "";
        lines.push(`${"  ".repeat(entry.depth - 1)}${entry.name}${suffix}${note}`);
      }
      if (lines.length === 0) return `${target.display} is empty`;
      if (more > 0) lines.push(`[${more} more entries not shown; list a subdirectory or use a smaller depth]`);
      return lines.join("\n");
    },
  });
}
