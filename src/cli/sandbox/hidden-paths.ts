import { realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import type { HiddenPath } from "./bwrap-arguments.ts";

/**
 * What a sandboxed command must not read: in the user's `home`, the keys and credentials of the
 * usual tools (SSH, GnuPG, cloud CLIs, Docker, Kubernetes, package registries, git, netrc,
 * database clients, password stores) and all of `~/.config` (where most other tools keep theirs);
 * and the CLI's own home `cliHome` (its sessions and trusted MCP configs). Absolute paths, some
 * of which may not exist.
 */
export function secretPaths(home: string, cliHome: string): string[] {
  return [...homeSecrets.map((name) => join(home, name)), cliHome];
}

const homeSecrets = [
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".config",
  ".kube",
  ".docker",
  ".netrc",
  ".git-credentials",
  ".npmrc",
  ".yarnrc",
  ".pypirc",
  ".gem/credentials",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".terraform.d",
  ".vault-token",
  ".pgpass",
  ".my.cnf",
  ".password-store",
  ".local/share/keyrings",
  ".mozilla",
  ".simple-agent-loop",
];

/**
 * The paths of `paths` that exist now, as `bwrapArguments` covers them: by their real path (a
 * symbolic link, of the path or of a directory above it, leads the command to what it names),
 * each with its kind.
 */
export async function existingHiddenPaths(paths: readonly string[]): Promise<HiddenPath[]> {
  const found = await Promise.all(
    paths.map(async (path): Promise<HiddenPath | undefined> => {
      try {
        const real = await realpath(path);
        return { path: real, directory: (await stat(real)).isDirectory() };
      } catch {
        return undefined;
      }
    }),
  );
  const unique = new Map(found.filter((entry) => entry !== undefined).map((entry) => [entry.path, entry]));
  return [...unique.values()];
}
