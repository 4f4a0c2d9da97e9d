import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseMcpConfig, type McpServerConfig } from "../mcp/config.ts";
import type { Style } from "./ansi.ts";
import { isCredentialName } from "./tools/command-environment.ts";
import { visibleLine } from "./visible-text.ts";

/** What starting an MCP config would run and send, for the trust prompt. */
export type McpConfigDescription = {
  /**
   * One block per server: its command, arguments and directory, or its URL; every env entry and
   * header; and the variables every command inherits. Escaped, styled.
   */
  text: string;
  /** The user's environment variables whose values the config sends (to a process or in a header), by name. */
  variables: string[];
  /** Those of `variables` whose names look like credentials (keys, tokens, secrets, passwords). */
  credentials: string[];
};

/**
 * Describes what the MCP config `content` (the file `path`) would do with the environment `env`:
 * everything each server runs or reaches, and every value it sends, with the places the user's
 * environment variables fill in shown as `${NAME}`, never their values. Throws as `parseMcpConfig`.
 */
export function describeMcpConfig(
  content: string,
  path: string,
  env: Record<string, string | undefined>,
  style: Style,
): McpConfigDescription {
  // Parsed with each set variable replaced by a marker, so the text shows where the user's values go.
  const nonce = randomBytes(8).toString("hex");
  const names: string[] = [];
  const marker = (name: string): string => {
    if (!names.includes(name)) names.push(name);
    return `\uE000${nonce}:${names.indexOf(name)}\uE001`;
  };
  const markers = new RegExp(`\uE000${nonce}:(\\d+)\uE001`, "g");
  const recording = new Proxy<Record<string, string | undefined>>(
    {},
    { get: (_, name) => (typeof name === "string" && typeof env[name] === "string" ? marker(name) : undefined) },
  );
  const servers = parseMcpConfig(content, path, { env: recording });
  const used = new Set<string>();
  const show = (value: string): string =>
    visibleLine(value).replace(markers, (_, index: string) => {
      const name = names[Number(index)]!;
      used.add(name);
      return style.yellow(`\${${visibleLine(name)}}`);
    });
  const commands = Object.values(servers).some((server) => !("url" in server));
  const text =
    Object.entries(servers)
      .map(([name, server]) => `  ${style.bold(visibleLine(name))}: ${describeServer(server, show)}`)
      .join("") +
    (commands ? style.dim(`  (commands also get ${inheritedVariables.join(", ")} from your environment)\n`) : "");
  const variables = names.filter((name) => used.has(name));
  return { text, variables, credentials: variables.filter(looksLikeCredential) };
}

/** What a stdio server inherits from the environment besides its `env` (the MCP SDK's default on POSIX). */
const inheritedVariables = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/**
 * The files the servers of `servers` run, as absolute paths: a command given as a path, and the
 * arguments that name an existing file (a script), each resolved against the server's
 * directory (`cwd` when it has none). Writing one of them changes what runs next time.
 */
export function mcpRuns(servers: Record<string, McpServerConfig>, cwd: string): string[] {
  const runs: string[] = [];
  for (const server of Object.values(servers)) {
    if ("url" in server) continue;
    const directory = resolve(cwd, server.cwd ?? ".");
    if (server.command.includes("/")) runs.push(resolve(directory, server.command));
    for (const argument of server.args ?? []) {
      const candidate = resolve(directory, argument);
      if (argument !== "" && !argument.startsWith("-") && existsSync(candidate)) runs.push(candidate);
    }
  }
  return runs;
}

/**
 * Whether an environment variable's name says it holds a secret: the names the bash tool keeps
 * from commands (`isCredentialName`), and, since this only warns, a wider net (`*_PASS`, `*_PWD`,
 * auth, cookie, session and private values), which bash could not scrub without breaking desktops.
 */
export function looksLikeCredential(name: string): boolean {
  return isCredentialName(name) || /pass$|_pwd$|auth|cookie|session|private/i.test(name);
}

function describeServer(server: McpServerConfig, show: (value: string) => string): string {
  if ("url" in server) {
    const headers = Object.entries(server.headers ?? {}).map(
      ([name, value]) => `      header ${show(name)}: ${show(value)}\n`,
    );
    return `${show(server.url)}\n${headers.join("")}`;
  }
  // Arguments that a reader would split differently are quoted, so each shows where it ends.
  const quote = (argument: string): string =>
    argument === "" || /[\s"'\\]/.test(argument) ? JSON.stringify(argument) : argument;
  const command = [server.command, ...(server.args ?? [])].map((part) => show(quote(part))).join(" ");
  const cwd = server.cwd === undefined ? "" : `      in ${show(server.cwd)}\n`;
  const env = Object.entries(server.env ?? {}).map(([name, value]) => `      env ${show(name)}=${show(value)}\n`);
  return `${command}\n${cwd}${env.join("")}`;
}
