import { homedir } from "node:os";
import type { CommandSandbox, SandboxMode } from "./command-sandbox.ts";
import { detectSandbox } from "./detect-sandbox.ts";
import { secretPaths } from "./hidden-paths.ts";

/**
 * The CLI's decision about the `bash` tool's sandbox: the sandbox its commands run in
 * (`undefined`: unconfined), a warning to say once at start, and whether every `bash` call must
 * be asked about (the sandbox was wanted but cannot run here: no "always" at the prompt).
 */
export type CliSandbox = { sandbox: CommandSandbox | undefined; warning: string | undefined; askEveryCommand: boolean };

/**
 * Chooses the sandbox from `--sandbox` (`mode`; default `workspace-write`) and
 * `--allow-network`: `off` runs commands unconfined with a warning; otherwise bwrap is probed
 * (`detectSandbox`) and, where it cannot run, commands run unconfined, the warning says why and
 * each is asked about. The hidden paths are the user's secrets under `HOME` and the CLI's home
 * (`cliHome`), see `secretPaths`.
 */
export async function cliSandbox(options: {
  mode: SandboxMode | undefined;
  allowNetwork: boolean;
  environment: NodeJS.ProcessEnv;
  cliHome: string;
}): Promise<CliSandbox> {
  const mode = options.mode ?? "workspace-write";
  if (mode === "off")
    return {
      sandbox: undefined,
      warning:
        "warning: --sandbox off: bash commands run unconfined, with your rights (they can read and change anything you can)",
      askEveryCommand: false,
    };
  const support = await detectSandbox(options.environment);
  if (!support.available)
    return {
      sandbox: undefined,
      warning: `warning: no sandbox for bash: ${support.reason}. Commands run unconfined, with your rights; each one is asked about (no "always")`,
      askEveryCommand: true,
    };
  const home = options.environment.HOME || homedir();
  return {
    sandbox: {
      mode,
      bwrap: support.bwrap,
      allowNetwork: options.allowNetwork,
      hidden: secretPaths(home, options.cliHome),
      processLimit: support.processLimit,
    },
    warning: undefined,
    askEveryCommand: false,
  };
}
