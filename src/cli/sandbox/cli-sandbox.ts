import { homedir } from "node:os";
import { join } from "node:path";
import type { AllowedHost } from "./allowed-hosts.ts";
import type { CommandSandbox, SandboxMode } from "./command-sandbox.ts";
import { detectSandbox } from "./detect-sandbox.ts";
import { secretPaths } from "./hidden-paths.ts";

/**
 * The CLI's decision about the `bash` tool's sandbox: the sandbox its commands run in
 * (`undefined`: unconfined), a warning to say once at start, and whether every `bash` call must
 * be asked about (the sandbox was wanted but cannot run here: no "always" at the prompt, no flag
 * or mode skips the question, and without a terminal the call is refused); `unavailable` says why
 * then.
 */
export type CliSandbox = {
  sandbox: CommandSandbox | undefined;
  warning: string | undefined;
  askEveryCommand: boolean;
  unavailable?: string;
};

/**
 * Chooses the sandbox from `--sandbox` (`mode`; default `workspace-write`),
 * `--allow-network` and `--allow-host` (`allowHosts`): `off` runs commands unconfined with a warning; otherwise bwrap is probed
 * (`detectSandbox`, its answer kept in `<cliHome>/sandbox-probe.json`) and, where it cannot run, the warning says why and each command is asked
 * about (then runs unconfined): `--sandbox off` is the only way to run them unasked. The hidden paths are the user's secrets under `HOME` and the CLI's home
 * (`cliHome`), see `secretPaths`.
 */
export async function cliSandbox(options: {
  mode: SandboxMode | undefined;
  allowNetwork: boolean;
  allowHosts?: readonly AllowedHost[];
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
  // Kept in the CLI's home between starts (the sandbox hides that home from commands).
  const support = await detectSandbox(options.environment, { cacheFile: join(options.cliHome, "sandbox-probe.json") });
  if (!support.available)
    return {
      sandbox: undefined,
      warning: `warning: no sandbox for bash: ${support.reason}. Each command is asked about (no "always", whatever --allow, --yes or --mode say) and runs unconfined, with your rights; without a terminal, bash is refused. --sandbox off runs commands unconfined without asking`,
      askEveryCommand: true,
      unavailable: support.reason,
    };
  const home = options.environment.HOME || homedir();
  return {
    sandbox: {
      mode,
      bwrap: support.bwrap,
      allowNetwork: options.allowNetwork,
      ...(options.allowHosts === undefined || options.allowHosts.length === 0
        ? {}
        : { allowHosts: options.allowHosts }),
      hidden: secretPaths(home, options.cliHome),
      processLimit: support.processLimit,
    },
    warning: undefined,
    askEveryCommand: false,
  };
}
