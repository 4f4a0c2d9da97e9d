import { lstat, realpath, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/**
 * A path the tools may touch. `absolute` has every symbolic link of its existing part resolved
 * and lies inside the workspace; `display` is relative to the workspace root (`.` for the root);
 * `exists` says whether something is there now.
 */
export type WorkspacePath = { absolute: string; display: string; exists: boolean };

/**
 * Resolves a path the model gave (relative to the workspace, or absolute) to one inside `root`,
 * the workspace's real path (see `workspaceRoot`). Throws an Error the model can act on when the
 * path escapes the workspace: through `..`, as an absolute path elsewhere, or through a symbolic
 * link (the file itself, any parent directory, or the directory a new file would be created in);
 * a link whose target does not exist is refused too, since writing through it would create the
 * target wherever it points. This confines the file tools only; `bash` is not confined.
 */
export async function resolveInWorkspace(root: string, path: unknown): Promise<WorkspacePath> {
  if (typeof path !== "string" || path.trim() === "") throw new Error("a path is required (relative to the workspace)");
  // A model writing `~/x` means the home directory; taken literally it would create a directory named `~`.
  if (path === "~" || path.startsWith("~/")) {
    throw new Error(
      `${path}: ~ is not expanded, paths are relative to the workspace (${root}); for a file really named ~, write ./${path}`,
    );
  }
  const lexical = resolve(root, path);
  if (!isInside(root, lexical))
    throw new Error(`${path} is outside the workspace (${root}); only paths inside it can be used`);
  // The deepest part that exists decides where the rest would be created, links resolved.
  let existing = lexical;
  const missing: string[] = [];
  while (!(await exists(existing))) {
    missing.unshift(basename(existing));
    existing = dirname(existing);
  }
  let real: string;
  try {
    real = await realpath(existing);
  } catch (error) {
    if (codeOf(error) !== "ENOENT") throw error;
    const shown = relative(root, existing) || ".";
    throw new Error(`${shown} is a symbolic link to a target that does not exist; it cannot be followed`, {
      cause: error,
    });
  }
  const absolute = join(real, ...missing);
  if (!isInside(root, absolute)) {
    throw new Error(
      `${path} leads to ${absolute} through a symbolic link, outside the workspace (${root}); only paths inside it can be used`,
    );
  }
  const display = relative(root, absolute) || ".";
  // `a.txt/` names a directory; the shell and the system refuse it for a file, and so do the tools.
  if ((path.endsWith("/") || path.endsWith(sep)) && missing.length === 0 && !(await stat(absolute)).isDirectory())
    throw new Error(`${display} is a file, not a directory (the path ends with /)`);
  return { absolute, display, exists: missing.length === 0 };
}

/** The real path of the workspace directory; throws a clear Error when it is missing or not a directory. */
export async function workspaceRoot(directory: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(resolve(directory));
  } catch {
    throw new Error(`the workspace ${directory} does not exist`);
  }
  if (!(await stat(real)).isDirectory()) throw new Error(`the workspace ${directory} is not a directory`);
  return real;
}

/** Whether `path` is `root` or below it (both absolute, normalized). */
export function isInside(root: string, path: string): boolean {
  const rest = relative(root, path);
  return rest === "" || (rest !== ".." && !rest.startsWith(`..${sep}`) && !isAbsolute(rest));
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    const code = codeOf(error);
    // ENOTDIR: a parent is a file; the parent itself is what exists.
    if (code === "ENOENT" || code === "ENOTDIR") return false;
    throw error;
  }
}

/** The `code` of a Node.js system error, if any. */
export function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}
