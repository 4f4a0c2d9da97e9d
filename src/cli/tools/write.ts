import { mkdir, stat, writeFile } from "node:fs/promises";
import { dirname, sep } from "node:path";
import { tool, type Tool } from "../../tools.ts";
import { resolveInWorkspace } from "./workspace-path.ts";
import type { Workspace } from "./workspace.ts";

/**
 * `write`: creates a file (and its missing parent directories) or replaces all of it, inside the
 * workspace. Runs in the workspace's write queue, and marks the file as seen so `edit` can follow.
 */
export function writeTool(workspace: Workspace): Tool {
  return tool({
    name: "write",
    description: "Create a file, or replace all of its content. Creates missing parent directories. To change part of a file, use edit.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path relative to the workspace." },
        content: { type: "string", description: "The whole content of the file." },
      },
      required: ["path", "content"],
      additionalProperties: false,
    },
    eager: false,
    handler: async (input) => {
      const { path, content } = input as { path: string; content: string };
      return workspace.writes(async () => {
        if (path.endsWith("/") || path.endsWith(sep)) throw new Error(`${path} ends with /: give the path of a file`);
        const target = await resolveInWorkspace(workspace.root, path);
        if (target.exists && (await stat(target.absolute)).isDirectory()) throw new Error(`${target.display} is a directory`);
        await mkdir(dirname(target.absolute), { recursive: true });
        await writeFile(target.absolute, content);
        workspace.seen.record(target.absolute, await stat(target.absolute));
        const lines = content === "" ? 0 : content.replace(/\n$/, "").split("\n").length;
        return `${target.exists ? "Replaced" : "Created"} ${target.display} (${lines} ${lines === 1 ? "line" : "lines"}, ${Buffer.byteLength(content)} bytes).`;
      });
    },
  });
}
