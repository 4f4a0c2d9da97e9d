import { join, relative } from "node:path";
import { readDirectoryInWorkspace } from "./workspace-file.ts";

/** Directories the listing and search tools never enter: version control and installed packages. */
export const skippedDirectories: ReadonlySet<string> = new Set([".git", "node_modules"]);

/** One entry met by `walk`. `depth` is 1 for the entries directly in the starting directory. */
export type WalkEntry = {
  path: string;
  /** Relative to the workspace root, with `/` separators. */
  relativePath: string;
  name: string;
  depth: number;
  kind: "file" | "directory" | "symlink" | "other";
  /** A directory `walk` does not enter: a skipped one, or one at `maxDepth`. */
  notEntered?: "skipped" | "depth";
};

/**
 * Every entry under `directory`, depth-first, directories before files, each group by name. It
 * never follows symbolic links (they are reported as such), and reads each directory through
 * one descriptor verified to lie inside `root` (`readDirectoryInWorkspace`), so a directory
 * swapped for a link while it runs is not entered either. It does not enter
 * `skippedDirectories` or directories below `maxDepth`. Unreadable directories are left out.
 * Stops early when the consumer stops iterating or `signal` aborts.
 */
export async function* walk(
  root: string,
  directory: string,
  options: { maxDepth: number; signal?: AbortSignal },
  depth = 1,
): AsyncGenerator<WalkEntry> {
  options.signal?.throwIfAborted();
  let entries;
  try {
    entries = await readDirectoryInWorkspace(root, directory, relative(root, directory) || ".");
  } catch {
    return;
  }
  const kindOf = (entry: (typeof entries)[number]): WalkEntry["kind"] =>
    entry.isSymbolicLink() ? "symlink" : entry.isDirectory() ? "directory" : entry.isFile() ? "file" : "other";
  const sorted = entries
    .map((entry) => ({ name: entry.name, kind: kindOf(entry) }))
    .sort(
      (a, b) =>
        Number(b.kind === "directory") - Number(a.kind === "directory") ||
        (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
    );
  for (const { name, kind } of sorted) {
    const path = join(directory, name);
    const entry: WalkEntry = { path, relativePath: relative(root, path).split("\\").join("/"), name, depth, kind };
    if (kind === "directory" && skippedDirectories.has(name)) entry.notEntered = "skipped";
    else if (kind === "directory" && depth >= options.maxDepth) entry.notEntered = "depth";
    yield entry;
    if (kind === "directory" && entry.notEntered === undefined) yield* walk(root, path, options, depth + 1);
  }
}
