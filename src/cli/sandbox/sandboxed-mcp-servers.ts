import { resolve } from "node:path";
import type { McpServerConfig } from "../../mcp/config.ts";
import type { CommandSandbox } from "./command-sandbox.ts";
import { sandboxedLaunch } from "./sandboxed-launch.ts";

/**
 * The MCP servers of `servers` as they start in `sandbox`: each stdio server's command becomes
 * the sandbox's launcher (bwrap, or the shell that puts bwrap in a pids cgroup), which runs the
 * command with its arguments as they are, from its `cwd` (resolved against `cwd`), with the
 * workspace writable or not as the mode says and the user's secrets hidden, as `bash` commands
 * run. Unlike `bash`, a server keeps the network (`allowNetwork`): servers exist to reach
 * services, and the user trusted the config that starts them. Servers reached by URL are not
 * processes of ours and stay as they are. `cleanup`, once the servers are closed, removes what the
 * launches made (their cgroups).
 */
export async function sandboxedMcpServers(
  servers: Record<string, McpServerConfig>,
  sandbox: CommandSandbox,
  places: { workspace: string; cwd: string },
): Promise<{ servers: Record<string, McpServerConfig>; cleanup: () => Promise<void> }> {
  const serverSandbox: CommandSandbox = { ...sandbox, allowNetwork: true };
  delete serverSandbox.allowHosts;
  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async (): Promise<void> => {
    await Promise.all(cleanups.map((step) => step()));
  };
  const wrapped: Record<string, McpServerConfig> = {};
  try {
    for (const [name, config] of Object.entries(servers)) {
      if (!("command" in config)) {
        wrapped[name] = config;
        continue;
      }
      const launch = await sandboxedLaunch(serverSandbox, places.workspace, [config.command, ...(config.args ?? [])], {
        cwd: resolve(places.cwd, config.cwd ?? "."),
      });
      cleanups.push(launch.cleanup);
      wrapped[name] = { ...config, command: launch.file, args: launch.args };
    }
  } catch (error) {
    await cleanup();
    throw error;
  }
  return { servers: wrapped, cleanup };
}
