import { readdirSync, realpathSync } from "node:fs";
import { join, sep } from "node:path";
import { isInside } from "./tools/workspace-path.ts";

/** The most names Tab offers at once. */
const maxCandidates = 200;

/**
 * What Tab completes at the end of `line`, as readline's completer answers: the candidates and the
 * text they replace. A line that is only `/` and letters completes to the commands (`names`,
 * without the slash); a last word `@path` completes to the workspace's files and directories
 * (directories with a trailing `/`, hidden names only when the typed part starts with a dot).
 * Never lists anything outside the workspace: an absolute path, a `..` or a directory whose real
 * path leads out completes to nothing. Never throws.
 */
export function completeLine(
  line: string,
  options: { commands: readonly string[]; workspace: string },
): [string[], string] {
  const command = /^\/([\w-]*)$/.exec(line);
  if (command !== null)
    return [options.commands.filter((name) => name.startsWith(command[1]!)).map((name) => `/${name}`), line];
  const mention = /(?:^|\s)@([^\s@]*)$/.exec(line);
  if (mention === null) return [[], line];
  const typed = mention[1]!;
  return [pathCandidates(typed, options.workspace).map((path) => `@${path}`), `@${typed}`];
}

function pathCandidates(typed: string, workspace: string): string[] {
  const slash = typed.lastIndexOf("/");
  const directory = slash === -1 ? "" : typed.slice(0, slash + 1);
  const start = typed.slice(slash + 1);
  if (typed.startsWith("/") || directory.split("/").some((part) => part === ".." || part === ".")) return [];
  try {
    const root = realpathSync(workspace);
    const real = realpathSync(join(root, directory));
    if (!isInside(root, real)) return [];
    return readdirSync(real, { withFileTypes: true })
      .filter((entry) => entry.name.startsWith(start) && (start.startsWith(".") || !entry.name.startsWith(".")))
      .filter((entry) => !entry.name.includes(sep) && !/\s/.test(entry.name))
      .slice(0, maxCandidates)
      .map((entry) => `${directory}${entry.name}${entry.isDirectory() ? "/" : ""}`)
      .sort();
  } catch {
    return [];
  }
}
