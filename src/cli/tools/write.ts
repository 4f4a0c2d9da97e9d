import { stat } from "node:fs/promises";
import { sep } from "node:path";
import { tool } from "../../tools/tool.ts";
import type { CheckedTool } from "./pre-check.ts";
import { createInWorkspace, readAt, replaceContent, type OpenedEntry } from "./workspace-file.ts";
import { resolveInWorkspace } from "./workspace-path.ts";
import type { FileChange, Workspace } from "./workspace.ts";

/**
 * `write`: creates a file (and its missing parent directories) or replaces all of it, inside the
 * workspace. Runs in the workspace's write queue, and marks the file as seen so `edit` can follow.
 * The file is opened once, verified and written through that descriptor (`createInWorkspace`):
 * a file with several hard links is refused, like anything that is not a regular file.
 */
export function writeTool(workspace: Workspace): CheckedTool {
  const check = async (input: unknown): Promise<string | undefined> => {
    const { path } = input as { path?: unknown };
    if (typeof path !== "string") return undefined;
    try {
      await targetOf(workspace, path);
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  };
  const writer = tool({
    name: "write",
    description:
      "Create a file, or replace all of its content. Creates missing parent directories. To change part of a file, use edit.",
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
    handler: async (input, context) => {
      const { path, content } = input as { path: string; content: string };
      return workspace.writes(async () => {
        const target = await targetOf(workspace, path);
        const file = await createInWorkspace(workspace.root, target);
        try {
          if (file.stats.isDirectory()) throw new Error(`${target.display} is a directory`);
          const bytes = Buffer.from(content);
          workspace.onFileChange?.({
            callId: context.id,
            path: target.display,
            previous: await previousContent(file),
            content: bytes,
            ...(file.createdDirectories?.length ? { directories: file.createdDirectories } : {}),
          });
          await replaceContent(file.handle, bytes);
          workspace.seen.record(target.absolute, await file.handle.stat());
        } finally {
          await file.close();
        }
        const lines = content === "" ? 0 : content.replace(/\n$/, "").split("\n").length;
        return `${file.created ? "Created" : "Replaced"} ${target.display} (${lines} ${lines === 1 ? "line" : "lines"}, ${Buffer.byteLength(content)} bytes).`;
      });
    },
  });
  return { ...writer, check };
}

// What the file held before this write: a file it created was not there.
async function previousContent(file: OpenedEntry): Promise<FileChange["previous"]> {
  if (file.created) return { type: "absent" };
  const { size } = file.stats;
  if (size > maxKeptBytes) return { type: "too-large", size };
  return { type: "content", bytes: await readAt(file.handle, 0, size), mode: file.stats.mode & 0o7777 };
}

// The previous content kept for a rewind, at most: as much as `edit` changes.
const maxKeptBytes = 20_000_000;

async function targetOf(workspace: Workspace, path: string): ReturnType<typeof resolveInWorkspace> {
  if (path.endsWith("/") || path.endsWith(sep)) throw new Error(`${path} ends with /: give the path of a file`);
  const target = await resolveInWorkspace(workspace.root, path);
  if (target.exists && (await stat(target.absolute)).isDirectory()) throw new Error(`${target.display} is a directory`);
  return target;
}
