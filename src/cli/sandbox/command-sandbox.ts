import type { AllowedHost } from "./allowed-hosts.ts";

/** The `--sandbox` choices: `workspace-write` (the default where bwrap works), `read-only`, `off`. */
export const sandboxModes = ["workspace-write", "read-only", "off"] as const;
export type SandboxMode = (typeof sandboxModes)[number];

/**
 * How the sandbox keeps a command's processes in number: a pids cgroup made for each command
 * under `parent` (the kernel refuses the fork past the limit, for root too); `rlimit`: the
 * sandbox's own user namespace with `ulimit -u`, which counts only the sandbox's processes and
 * binds a user other than root; `none` (root without a writable pids cgroup): no kernel limit, so
 * the runner counts the sandbox's processes and kills it past the limit (`watchProcessCount`).
 */
export type ProcessLimit = { kind: "cgroup"; parent: string } | { kind: "rlimit" } | { kind: "none" };

/**
 * What the `bash` tool runs a command in: bubblewrap (`bwrap`, at `bwrap`) with the whole file
 * system read-only but the workspace (`workspace-write`) and a private `/tmp`, `hidden` paths
 * (the user's secrets, the CLI's home) covered by empty ones, no network unless `allowNetwork`,
 * a pid namespace that dies with the command and with the CLI, and limits on processes and file
 * sizes. Plain data: built once at start (see `cliSandbox`), used by every command.
 */
export type CommandSandbox = {
  mode: Exclude<SandboxMode, "off">;
  bwrap: string;
  allowNetwork: boolean;
  /**
   * Without `allowNetwork`, the hosts a command may still reach over HTTP and HTTPS: through a
   * proxy the runner starts for each command (`startNetworkProxy`), which the usual variables
   * (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, lower case too) point at. Programs that ignore
   * them have no network. Empty or absent: no network at all.
   */
  allowHosts?: readonly AllowedHost[];
  /** Absolute paths the command must not see; those that exist are covered when a command starts. */
  hidden: readonly string[];
  processLimit: ProcessLimit;
  /** The most processes a command may have at once (default 1024). */
  maxProcesses?: number;
  /** The largest file a command may write, in bytes (default 4 GiB): runaway output into a file stops there. */
  maxFileBytes?: number;
};
