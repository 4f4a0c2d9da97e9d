import { isAbsolute, relative, sep } from "node:path";
import type { AllowedHost } from "./allowed-hosts.ts";
import type { CommandSandbox } from "./command-sandbox.ts";
import { proxyForwarderScript, proxyStartScript, sandboxProxyDirectory } from "./proxy-forwarder.ts";

/** A path to cover, and whether it is a directory (covered by an empty one) or a file (by an empty file). */
export type HiddenPath = { path: string; directory: boolean };

/** What one command's bwrap call is built from: the sandbox, the workspace, and the hidden paths that exist now. */
export type BwrapCall = {
  sandbox: Pick<
    CommandSandbox,
    "mode" | "allowNetwork" | "allowHosts" | "processLimit" | "maxProcesses" | "maxFileBytes"
  >;
  /** The workspace's real path: with `workspace-write` the only place the command can write to. */
  workspace: string;
  hidden: readonly HiddenPath[];
  /** A command line for `bash -c`, or a program and its arguments (run as they are, found on `PATH`). */
  command: string | readonly string[];
  /** Where the command starts (default: the workspace). */
  cwd?: string;
  /**
   * The proxy that lets the command reach `sandbox.allowHosts` (`startNetworkProxy`): the host
   * directory holding its socket, bound read-only into the sandbox, and the `node` that runs the
   * forwarder in it. Without one, `allowHosts` gives no network.
   */
  proxy?: { socketDirectory: string; node: string };
};

/**
 * The arguments of `bwrap` that run `command` with `bash -c` as `CommandSandbox` describes. Pure.
 * Mounts come in order, each over the ones before: the root read-only, a fresh `/dev` and
 * `/proc`, a private `/tmp`; hidden paths that hold the workspace and those apart from it, then
 * the workspace (writable or not), then hidden paths inside it, so neither hides the other. The command starts in the
 * workspace, in a new session, without capabilities, in new namespaces (the network's only
 * without `allowNetwork`); `--die-with-parent` and the pid namespace end every process it left
 * when it ends or the CLI dies. Limits are set by a first `bash` before the command's own
 * (file size always; process count where the user namespace makes `ulimit -u` count the
 * sandbox alone).
 */
export function bwrapArguments(call: BwrapCall): string[] {
  const { sandbox, workspace } = call;
  const proxy = sandbox.allowNetwork ? undefined : call.proxy;
  const holding = outermost(call.hidden.filter((entry) => isWithin(entry.path, workspace)));
  const inside = outermost(call.hidden.filter((entry) => entry.path !== workspace && isWithin(workspace, entry.path)));
  const elsewhere = outermost(
    call.hidden.filter((entry) => !isWithin(entry.path, workspace) && !isWithin(workspace, entry.path)),
  ).filter((entry) => !holding.some((outer) => isWithin(outer.path, entry.path)));
  return [
    ...["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"],
    ...programsInTmp(call, proxy).flatMap((directory) => ["--ro-bind", directory, directory]),
    ...holding.flatMap(cover),
    ...elsewhere.flatMap(cover),
    ...[sandbox.mode === "workspace-write" ? "--bind" : "--ro-bind", workspace, workspace],
    ...inside.flatMap(cover),
    ...(proxy === undefined ? [] : ["--ro-bind", proxy.socketDirectory, sandboxProxyDirectory]),
    "--unshare-all",
    ...(sandbox.allowNetwork ? ["--share-net"] : []),
    ...(sandbox.processLimit.kind === "rlimit" ? ["--unshare-user"] : []),
    ...["--die-with-parent", "--new-session", "--cap-drop", "ALL"],
    ...["--chdir", call.cwd ?? workspace, "--setenv", "TMPDIR", "/tmp"],
    ...cacheEnvironment.flatMap(([name, value]) => ["--setenv", name, value]),
    "--",
    ...["bash", "-c", startScript(call), "bash"],
    ...(proxy === undefined ? [] : [proxy.node, proxyForwarderScript]),
    ...(typeof call.command === "string" ? [call.command] : call.command),
  ];
}

/** The default most processes a sandboxed command may have at once. */
export const defaultMaxProcesses = 1024;

/** The default largest file a sandboxed command may write (4 GiB). */
export const defaultMaxFileBytes = 4 * 1024 ** 3;

// Limits first: `ulimit -f` counts blocks of 1024 bytes; set as hard limits too, so the command
// cannot raise them. Then the proxy's forwarder, then the command.
function startScript(call: BwrapCall): string {
  const { sandbox } = call;
  const blocks = Math.max(1, Math.floor((sandbox.maxFileBytes ?? defaultMaxFileBytes) / 1024));
  const processes = sandbox.maxProcesses ?? defaultMaxProcesses;
  const processLimit = sandbox.processLimit.kind === "rlimit" ? `ulimit -S -H -u ${processes} || exit 125; ` : "";
  const proxy =
    sandbox.allowNetwork || call.proxy === undefined ? "" : proxyStartScript(loopbackThroughProxy(sandbox.allowHosts));
  const run = typeof call.command === "string" ? 'exec bash -c "$1"' : 'exec "$@"';
  return `${processLimit}ulimit -S -H -f ${blocks} || exit 125; ${proxy}${run}`;
}

// The sandbox's own loopback names that an allowed host names: those go to the host, through the proxy.
function loopbackThroughProxy(allowHosts: readonly AllowedHost[] | undefined): string[] {
  const hosts = (allowHosts ?? []).map((entry) => entry.host);
  return [
    ...(hosts.some((host) => host === "localhost" || host.endsWith(".localhost")) ? ["localhost"] : []),
    ...hosts.filter((host) => host === "127.0.0.1" || host === "::1"),
  ];
}

/**
 * Package managers' caches, pointed into the private `/tmp`: the real ones (`~/.npm`,
 * `~/.cache/pip`, …) stay readable but not writable, and an install that must write its cache
 * would fail there. Emptied with `/tmp` when the command ends.
 */
export const cacheEnvironment: readonly (readonly [string, string])[] = [
  ["npm_config_cache", "/tmp/.cache/npm"],
  ["YARN_CACHE_FOLDER", "/tmp/.cache/yarn"],
  ["PIP_CACHE_DIR", "/tmp/.cache/pip"],
  ["GOCACHE", "/tmp/.cache/go-build"],
  ["BUN_INSTALL_CACHE_DIR", "/tmp/.cache/bun"],
];

function cover(entry: HiddenPath): string[] {
  return entry.directory ? ["--tmpfs", entry.path, "--remount-ro", entry.path] : ["--ro-bind", "/dev/null", entry.path];
}

// A path inside another hidden one of the same group is covered with it (and could not be
// mounted on the read-only cover anyway); one inside the workspace is not, when the workspace
// lies inside a cover, since the workspace's bind shows it again.
function outermost(hidden: readonly HiddenPath[]): HiddenPath[] {
  const sorted = [...hidden].sort((a, b) => a.path.length - b.path.length);
  const kept: HiddenPath[] = [];
  for (const entry of sorted) {
    if (!kept.some((outer) => outer.path === entry.path || isWithin(outer.path, entry.path))) kept.push(entry);
  }
  return kept;
}

/** Whether `path` is `directory` or lies inside it (both absolute and normalized). */
export function isWithin(directory: string, path: string): boolean {
  const rest = relative(directory, path);
  return rest === "" || (rest !== ".." && !rest.startsWith(`..${sep}`) && !isAbsolute(rest));
}

/**
 * The directories under /tmp that what the sandbox starts lives in (node itself, an MCP server's
 * script, a checkout made in /tmp): the private /tmp would hide them, so each is put back read-only
 * (the top directory below /tmp holding it; hidden paths inside it are covered after).
 */
function programsInTmp(call: BwrapCall, proxy: BwrapCall["proxy"]): string[] {
  const argv = typeof call.command === "string" ? [] : call.command;
  const paths = [...(proxy === undefined ? [] : [proxy.node]), ...argv, ...(call.cwd === undefined ? [] : [call.cwd])];
  const directories = new Set<string>();
  for (const path of paths) {
    const match = /^\/tmp\/([^/]+)\//.exec(path);
    if (match !== null) directories.add(`/tmp/${match[1]}`);
  }
  return [...directories];
}
