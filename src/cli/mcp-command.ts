import { parseArgs } from "node:util";
import { errorMessage } from "../errors.ts";
import type { McpHttpServerConfig } from "../mcp/config.ts";
import { memoryTokenStore } from "../mcp/token-store.ts";
import { createStyle, useColor } from "./ansi.ts";
import { cliVersion } from "./args.ts";
import { askMcpTrust } from "./ask-mcp-trust.ts";
import { cliHome } from "./cli-home.ts";
import { CliError } from "./cli-error.ts";
import { mcpAuthPath, cliTokenStore } from "./mcp-home.ts";
import { signInOpener } from "./mcp-sign-in.ts";
import { trustedMcpServers } from "./mcp-tools.ts";
import { terminalInput } from "./terminal-input.ts";
import { workspaceRoot } from "./tools/workspace-path.ts";
import { visibleLine, visibleText } from "./visible-text.ts";

/** The process around the command (as `runCli` gets it). */
type McpCommandIo = {
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
};

export const mcpUsage = `Usage: simple-agent-loop mcp login <server> [--mcp-config <file>] [-C <dir>]
       simple-agent-loop mcp logout <server> [--mcp-config <file>] [-C <dir>]

Signs in to an MCP server of the workspace's config (<workspace>/.simple-agent-loop/mcp.json, or
--mcp-config) ahead of time, or out of it. The sign-in page opens with $BROWSER or the platform's
opener, and its address is printed. Tokens are kept in <home>/mcp-auth.json (mode 0600), <home>
being SIMPLE_AGENT_LOOP_HOME or ~/.simple-agent-loop.
Exit codes: 0 done, 1 failed, 2 usage.`;

/**
 * `simple-agent-loop mcp login|logout <server>`: signs in to an HTTP MCP server with OAuth (the
 * tokens go to `<home>/mcp-auth.json` only once the sign-in succeeded: a failed one leaves what
 * was kept), or removes what is kept for it. Resolves with the exit code; throws a `CliError`
 * (`usage`: exit 2) for a command line it cannot make sense of, an unknown server or one with
 * nothing to sign in to.
 */
export async function runMcpCommand(argv: readonly string[], io: McpCommandIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: {
        "mcp-config": { type: "string" },
        cwd: { type: "string", short: "C" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw new CliError(`mcp: ${errorMessage(error)}`, "usage");
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    io.stdout.write(`${mcpUsage}\n`);
    return 0;
  }
  const [action, server, ...rest] = positionals;
  if (action !== "login" && action !== "logout")
    throw new CliError(`mcp: say login or logout${action === undefined ? "" : `, not ${action}`}`, "usage");
  if (server === undefined || server === "" || rest.length > 0)
    throw new CliError(`mcp ${action}: name one server (mcp ${action} <server>)`, "usage");
  const style = createStyle(useColor(io.stdout, io.env));
  const home = cliHome(io.env);
  const workspace = await workspaceRoot(values.cwd ?? io.cwd).catch((error: unknown) => {
    throw new CliError(errorMessage(error));
  });
  const input = io.stdin.isTTY === true ? terminalInput(io.stdin, io.stdout) : undefined;
  const found = await trustedMcpServers(values["mcp-config"], {
    workspace,
    cwd: io.cwd,
    home,
    // Signing in names one server: the user's own choice, but the config's headers still go with it.
    yes: false,
    env: io.env,
    style,
    warn: (line) => io.stderr.write(`${visibleText(line)}\n`),
    ...(input === undefined
      ? {}
      : { ask: (config) => askMcpTrust(input, io.stdout, style, config, () => process.exit(130)) }),
  });
  if (found === undefined) throw new CliError("mcp: no MCP servers to sign in to (see --mcp-config)");
  const config = Object.hasOwn(found.servers, server) ? found.servers[server]! : undefined;
  if (config === undefined)
    throw new CliError(
      `mcp ${action}: ${found.path} has no server named ${server}; it has ${Object.keys(found.servers).join(", ")}`,
      "usage",
    );
  if (!("url" in config))
    throw new CliError(`mcp ${action}: ${server} runs as a command; only HTTP servers sign in`, "usage");
  if (config.auth === false)
    throw new CliError(`mcp ${action}: ${server} has "auth": false in ${found.path}; it does not sign in`, "usage");
  return action === "login" ? logIn(server, config, io, home) : logOut(server, config, io, home);
}

async function logIn(server: string, config: McpHttpServerConfig, io: McpCommandIo, home: string): Promise<number> {
  const style = createStyle(useColor(io.stdout, io.env));
  const kept = cliTokenStore(home);
  // A fresh sign-in in memory (the client registration and discovery kept); the file changes only once it worked.
  const { tokens: _old, ...reusable } = (await kept.get(config.url)) ?? {};
  const flow = memoryTokenStore();
  await flow.set(config.url, reusable);
  const opener = signInOpener(io.stdout, style, io.env);
  let asked = false;
  const { connectMcp } = await import("../mcp/index.ts");
  try {
    const connection = await connectMcp(
      { [server]: config },
      {
        trust: false,
        clientInfo: { name: "simple-agent-loop", version: cliVersion() },
        oauth: {
          store: flow,
          openAuthorizationUrl: (url, name) => {
            asked = true;
            opener.open(url, name);
          },
        },
      },
    );
    await connection.close();
  } catch (error) {
    throw new CliError(`mcp login: ${errorMessage(error)}`);
  } finally {
    opener.close();
  }
  if (!asked) {
    io.stdout.write(`MCP server ${visibleLine(server)} did not ask for a sign-in; nothing was kept.\n`);
    return 0;
  }
  await kept.set(config.url, (await flow.get(config.url)) ?? {});
  io.stdout.write(
    `${style.green("✓")} Signed in to MCP server ${visibleLine(server)}. Its tokens are kept in ${visibleLine(mcpAuthPath(home))}.\n`,
  );
  return 0;
}

async function logOut(server: string, config: McpHttpServerConfig, io: McpCommandIo, home: string): Promise<number> {
  const kept = cliTokenStore(home);
  if ((await kept.get(config.url)) === undefined) {
    io.stdout.write(`MCP server ${visibleLine(server)}: not signed in; nothing to remove.\n`);
    return 0;
  }
  await kept.delete(config.url);
  io.stdout.write(
    `Signed out of MCP server ${visibleLine(server)}: its tokens were removed from ${visibleLine(mcpAuthPath(home))}.\n`,
  );
  return 0;
}
