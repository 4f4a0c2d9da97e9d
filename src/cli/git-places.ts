import { readFile, stat } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve } from "node:path";

/** A place git reads and then runs: what is there becomes code executed by a later git command. */
export type GitPlace = { path: string; why: string };

/**
 * Where git, run in any repository that holds `target`, reads hooks, configuration or programs
 * named by its configuration: for each directory from `target`'s up to the root that holds a
 * `.git` (a directory, or a file whose `gitdir:` names one elsewhere, as worktrees and
 * submodules have), the git directory itself, its `commondir` (where a linked worktree's hooks
 * and config live), the directory `core.hooksPath` names (relative to the work tree, as git
 * takes it) and the program `core.fsmonitor` names. The configuration read is the repository's
 * `config` and `config.worktree`, the user's (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`) and
 * the system's, with every `include.path` and `includeIf.*.path` followed whatever its condition
 * (protecting too much costs a question; too little, a hook). Never throws: what cannot be read
 * names no place. Any directory of those that git would take for a repository (a `HEAD` file
 * beside `objects/` and `refs/`, or beside a `commondir` file) is a place too, whoever points
 * at it.
 */
export async function gitPlaces(
  target: string,
  environment: { home: string; xdgConfigHome?: string | undefined },
): Promise<GitPlace[]> {
  const places: GitPlace[] = [];
  const userConfigs = [
    join(environment.home, ".gitconfig"),
    join(environment.xdgConfigHome ?? join(environment.home, ".config"), "git", "config"),
    "/etc/gitconfig",
  ];
  for (let directory = dirname(resolve(target)); ; directory = dirname(directory)) {
    // A directory git accepts as a repository, whoever points at it (a `.git` file anywhere,
    // `--git-dir`, a worktree): its hooks and config run whatever they hold.
    if (await isGitDirectory(directory)) places.push({ path: directory, why: "a git directory" });
    const gitDirectory = await findGitDirectory(directory);
    if (gitDirectory !== undefined) {
      places.push({ path: gitDirectory, why: "its git directory" });
      const common = await readText(join(gitDirectory, "commondir"));
      const commonDirectory = common === undefined ? gitDirectory : resolve(gitDirectory, common.trim());
      if (commonDirectory !== gitDirectory) places.push({ path: commonDirectory, why: "its common git directory" });
      const configs = [join(commonDirectory, "config"), join(gitDirectory, "config.worktree"), ...userConfigs];
      for (const { key, value, file } of await readConfigs(configs, environment.home)) {
        const path = expandHome(value, environment.home);
        if (key === "core.hookspath") places.push({ path: resolve(directory, path), why: `core.hooksPath in ${file}` });
        else if (key === "core.fsmonitor" && !/^(true|false|yes|no|on|off|1|0)?$/i.test(value))
          places.push({ path: resolve(directory, path), why: `core.fsmonitor in ${file}` });
      }
    }
    if (dirname(directory) === directory) return places;
  }
}

async function isGitDirectory(directory: string): Promise<boolean> {
  const kind = async (name: string): Promise<"file" | "directory" | undefined> => {
    const found = await stat(join(directory, name)).catch(() => undefined);
    return found === undefined ? undefined : found.isDirectory() ? "directory" : "file";
  };
  if ((await kind("HEAD")) !== "file") return false;
  if ((await kind("commondir")) === "file") return true;
  return (await kind("objects")) === "directory" && (await kind("refs")) === "directory";
}

// The git directory of a work tree rooted at `directory`: its `.git` directory, or the one a
// `.git` file names (`gitdir: <path>`, relative to the file).
async function findGitDirectory(directory: string): Promise<string | undefined> {
  const dotGit = join(directory, ".git");
  const found = await stat(dotGit).catch(() => undefined);
  if (found === undefined) return undefined;
  if (found.isDirectory()) return dotGit;
  const pointer = /^gitdir:\s*(.+?)\s*$/m.exec((await readText(dotGit)) ?? "");
  return pointer === null ? dotGit : resolve(directory, pointer[1]!);
}

type ConfigValue = { key: string; value: string; file: string };

const maxIncludes = 20;

// Every `section.key = value` of the files (and the files they include), keys lower-cased as git
// compares them (the subsection, between quotes, is dropped: only core.* and include* are used).
async function readConfigs(files: readonly string[], home: string): Promise<ConfigValue[]> {
  const values: ConfigValue[] = [];
  const queue = [...files];
  const seen = new Set<string>();
  while (queue.length > 0 && seen.size < files.length + maxIncludes) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = await readText(file);
    if (text === undefined) continue;
    for (const entry of parseConfig(text, file)) {
      values.push(entry);
      if (entry.key === "include.path" || (entry.key.startsWith("includeif.") && entry.key.endsWith(".path"))) {
        const included = expandHome(entry.value, home);
        queue.push(isAbsolute(included) ? included : resolve(dirname(file), included));
      }
    }
  }
  return values;
}

function parseConfig(text: string, file: string): ConfigValue[] {
  const values: ConfigValue[] = [];
  let section = "";
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    const header = /^\[\s*([\w.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$/.exec(line);
    if (header !== null) {
      // `[includeIf "gitdir:~/x/"]` keeps its subsection so its path is recognised as an include.
      section = header[1]!.toLowerCase() + (header[2] !== undefined ? `.${header[2]}` : "");
      continue;
    }
    const assignment = /^([A-Za-z][\w-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (assignment === null || section === "") continue;
    const key = `${section.startsWith("includeif.") ? "includeif.x" : section}.${assignment[1]!.toLowerCase()}`;
    values.push({ key, value: configValue(assignment[2] ?? "true"), file });
  }
  return values;
}

// A value as git reads it: quotes removed, escapes resolved, a comment (# or ;) outside quotes cut.
function configValue(raw: string): string {
  let out = "";
  let quoted = false;
  for (let index = 0; index < raw.length; index++) {
    const character = raw[index]!;
    if (character === "\\" && index + 1 < raw.length) {
      const next = raw[++index]!;
      out += next === "n" ? "\n" : next === "t" ? "\t" : next;
    } else if (character === '"') quoted = !quoted;
    else if ((character === "#" || character === ";") && !quoted) break;
    else out += character;
  }
  return out.trim();
}

function expandHome(path: string, home: string): string {
  return path === "~" ? home : path.startsWith("~/") ? join(home, path.slice(2)) : path;
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch {
    return undefined;
  }
}
