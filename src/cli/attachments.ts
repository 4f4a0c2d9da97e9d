import { realpath, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { describeBytes } from "../loop/content-size.ts";
import { sniffBytes, sniffMediaType, type ContentPart } from "../content-parts.ts";
import { mediaContent, mediaLimits, isBinary } from "./tools/read.ts";

import { openInWorkspace, readAt } from "./tools/workspace-file.ts";
import { isInside, resolveInWorkspace, type WorkspacePath } from "./tools/workspace-path.ts";
import type { Workspace } from "./tools/workspace.ts";

/** What may be attached to a task, and how much. */
export type AttachOptions = {
  /** The CLI's home (other sessions' logs, the trust list): nothing in it is attached. */
  home?: string;
  /** Text files larger than this are refused (default 256 KB: the agent can `read` them in parts). */
  maxTextBytes?: number;
  maxImageBytes?: number;
  maxPdfBytes?: number;
};

/**
 * The user message of a task: the task as typed, followed by the files it attaches — each path of
 * `attach` (`--attach`, which must name a file) and each `@path` the task mentions (`@src/a.ts`,
 * `@"my shot.png"`) that names a file of the workspace; a mention of nothing there (`@types/node`,
 * `@someone`) stays plain text. Images (png, jpeg, gif, webp) and PDFs, told apart by their first
 * bytes, go as image and file parts; other files as their text. Without attachments the task stays
 * a string. A file is reached only as the file tools reach it (inside the workspace, no link
 * leading out, one hard link); an attachment outside the workspace, in the CLI's home, a binary
 * file of another kind or a file over its size limit makes it throw an Error saying which and why,
 * so nothing is sent. An attached text file counts as read for `edit`.
 */
export async function taskContent(
  workspace: Workspace,
  task: string,
  attach: readonly string[] = [],
  options: AttachOptions = {},
): Promise<string | ContentPart[]> {
  const targets = new Map<string, WorkspacePath>();
  for (const path of attach) {
    const target = await resolveAttached(workspace.root, path, `--attach ${path}`);
    if (!target.exists) throw new Error(`--attach ${path}: ${target.display} does not exist`);
    targets.set(target.absolute, target);
  }
  for (const mention of mentions(task)) {
    const target = await resolveMention(workspace.root, mention);
    if (target !== undefined && !targets.has(target.absolute)) targets.set(target.absolute, target);
  }
  if (targets.size === 0) return task;
  const content: ContentPart[] = [{ type: "text", text: task }];
  for (const target of targets.values()) content.push(...(await attachedFile(workspace, target, options)));
  return content;
}

/** The paths a task mentions with `@`: `@path` after a space or at the start, or `@"a path"`. */
export function mentions(task: string): string[] {
  const found: string[] = [];
  for (const match of task.matchAll(/(?:^|\s)@(?:"([^"\n]+)"|(\S+))/g)) found.push(match[1] ?? match[2]!);
  return found;
}

// An `@` word is a file only when one is there: the word as written, else without the
// punctuation a sentence puts after it (`see @a.ts.`). Leaving the workspace is refused, not ignored.
async function resolveMention(root: string, mention: string): Promise<WorkspacePath | undefined> {
  const candidates = [mention, mention.replace(/[.,;:!?)\]}'"]+$/, "")].filter(
    (candidate, index, all) => candidate !== "" && all.indexOf(candidate) === index,
  );
  for (const candidate of candidates) {
    const target = await resolveAttached(root, candidate, `@${candidate}`);
    if (target.exists && !(await isDirectory(target))) return target;
  }
  return undefined;
}

async function resolveAttached(root: string, path: string, shown: string): Promise<WorkspacePath> {
  try {
    return await resolveInWorkspace(root, path);
  } catch (error) {
    throw new Error(`${shown}: ${error instanceof Error ? error.message : String(error)}; nothing was attached`, {
      cause: error,
    });
  }
}

async function isDirectory(target: WorkspacePath): Promise<boolean> {
  return (await stat(target.absolute).catch(() => undefined))?.isDirectory() === true;
}

// One file as parts: a line naming it and the image or PDF, or its text between two lines.
async function attachedFile(
  workspace: Workspace,
  target: WorkspacePath,
  options: AttachOptions,
): Promise<ContentPart[]> {
  const shown = target.display;
  const home =
    options.home === undefined ? undefined : await realpath(options.home).catch(() => resolve(options.home!));
  if (home !== undefined && isInside(home, target.absolute))
    throw new Error(`${shown} is in the CLI's home (sessions and trusted configs), which is never attached`);
  const file = await openInWorkspace(workspace.root, target, "read");
  try {
    const { stats } = file;
    if (stats.isDirectory()) throw new Error(`${shown} is a directory; attach files, or name it without @`);
    const media = sniffMediaType(await readAt(file.handle, 0, sniffBytes));
    if (media !== undefined) {
      const limits = {
        maxImageBytes: options.maxImageBytes ?? mediaLimits.maxImageBytes,
        maxPdfBytes: options.maxPdfBytes ?? mediaLimits.maxPdfBytes,
      };
      return (await mediaContent(file.handle, stats.size, media, shown, limits)).content;
    }
    const maxTextBytes = options.maxTextBytes ?? 256 * 1024;
    if (stats.size > maxTextBytes)
      throw new Error(
        `${shown} is ${describeBytes(stats.size)}, over the ${describeBytes(maxTextBytes)} a text attachment may have; name it without @ and let the agent read it`,
      );
    const bytes = await readAt(file.handle, 0, stats.size);
    if (isBinary(bytes))
      throw new Error(`${shown} is a binary file; only text, images (png, jpeg, gif, webp) and PDFs can be attached`);
    workspace.seen.record(target.absolute, stats);
    return [{ type: "text", text: `[file ${shown}]\n${bytes.toString("utf8")}\n[end of ${shown}]` }];
  } finally {
    await file.close();
  }
}
