import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve, sep } from "node:path";
import type { JsonObject } from "../session.ts";
import { gitPlaces } from "./git-places.ts";
import { isInside, resolveInWorkspace } from "./tools/workspace-path.ts";

/** The tools whose `path` input names the file they change. */
const fileWriters: ReadonlySet<string> = new Set(["write", "edit"]);

/**
 * Where a file write becomes code execution later, so permission for it is never granted ahead:
 * for a `write` or `edit` call whose target lies there, the reason to ask every time; `undefined`
 * for any other call. The places: anything inside a `.git` directory (or a `.git` file) — its
 * config and hooks run commands; wherever else git reads hooks, config or programs for a
 * repository holding the target (a `.git` file's `gitdir:`, a worktree's `commondir`, the
 * directory `core.hooksPath` names, `core.fsmonitor`'s program: see `gitPlaces`, read from
 * `user`'s git configuration too); the workspace's `.simple-agent-loop/` (its `mcp.json` starts
 * servers); the CLI's home (`home`: its trust list) when the workspace holds it; and the files
 * the MCP configs in use run (`runs`: the commands and script arguments of their servers).
 *
 * The target is resolved as the tool resolves it (`..` and symbolic links followed, see
 * `resolveInWorkspace`) and compared without regard to case, as a case-insensitive file system
 * would open it. A path the tools refuse anyway (outside the workspace) is not protected here.
 * Never throws.
 */
export function protectedTargets(options: {
  workspace: string;
  home: string;
  runs?: readonly string[];
  /** Whose git configuration applies (default: this process's home and `XDG_CONFIG_HOME`). */
  user?: { home: string; xdgConfigHome?: string | undefined };
}): (call: { name: string; input: JsonObject }) => Promise<string | undefined> {
  const fold = (path: string): string => path.toLowerCase();
  const settings = fold(join(options.workspace, ".simple-agent-loop"));
  const home = fold(realOrLexical(options.home));
  const runs = new Set((options.runs ?? []).map((path) => fold(realOrLexical(path))));
  const user = options.user ?? { home: homedir(), xdgConfigHome: process.env.XDG_CONFIG_HOME };
  return async ({ name, input }) => {
    if (!fileWriters.has(name)) return undefined;
    let absolute: string;
    try {
      absolute = (await resolveInWorkspace(options.workspace, input.path)).absolute;
    } catch {
      return undefined;
    }
    const target = fold(absolute);
    const shown = typeof input.path === "string" ? input.path : "?";
    const writes = `${name} ${shown}`;
    if (target.split(sep).includes(".git"))
      return `${writes} changes a git repository's .git, whose config and hooks run commands: asked every time`;
    for (const place of await gitPlaces(absolute, user)) {
      const where = fold(realOrLexical(place.path));
      if (where === target || isInside(where, target))
        return `${writes} changes where git reads hooks, config or programs (${place.why}): asked every time`;
    }
    if (isInside(settings, target))
      return `${writes} changes the workspace's .simple-agent-loop, whose mcp.json starts commands: asked every time`;
    if (isInside(home, target))
      return `${writes} changes the CLI's own home (its trusted MCP configs and sessions): asked every time`;
    if (runs.has(target)) return `${writes} changes a file an MCP server in use runs: asked every time`;
    return undefined;
  };
}

// A path as the file system names it: the deepest part that exists with its links resolved,
// the rest as given.
function realOrLexical(path: string): string {
  const missing: string[] = [];
  for (let existing = resolve(path); ; existing = dirname(existing)) {
    try {
      return join(realpathSync(existing), ...missing);
    } catch {
      if (dirname(existing) === existing) return resolve(path);
      missing.unshift(basename(existing));
    }
  }
}
