import type { McpServerAuth } from "./oauth-provider.ts";
import { jsonNestedDeeperThan, maxJsonDepth } from "../session.ts";
import { readFile } from "node:fs/promises";
import { errorMessage } from "../errors.ts";
import { McpConfigError } from "./errors.ts";

/** How to reach one MCP server: a command to start (stdio) or a URL (Streamable HTTP). */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** What every server's entry may say besides how to reach it. */
type McpServerSettings = {
  /**
   * `true`: the server's tools are deferred (`ToolSchema.deferred`): not sent to the model until a
   * `search_tools` call loads them, so many tools cost a request nothing until needed.
   */
  deferred?: boolean;
};

/** A server started as a child process that speaks MCP on its stdin and stdout. */
export type McpStdioServerConfig = McpServerSettings & {
  /** Optional marker, as Claude Code's `.mcp.json` writes it. */
  type?: "stdio";
  /** The executable, looked up on `PATH`. No shell runs it: arguments go in `args`. */
  command: string;
  args?: string[];
  /**
   * Added to a small inherited environment (`HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER` on
   * POSIX; the MCP SDK's default), not to all of `process.env`: a server sees only the secrets it is given.
   */
  env?: Record<string, string>;
  /** Working directory of the process (default: this process's). */
  cwd?: string;
};

/** A server reached over Streamable HTTP. The deprecated HTTP+SSE transport is not supported. */
export type McpHttpServerConfig = McpServerSettings & {
  /** Optional marker, as Claude Code's `.mcp.json` writes it. */
  type?: "http";
  /** The MCP endpoint, e.g. `https://example.com/mcp`. */
  url: string;
  /** Sent with every request, e.g. `{ Authorization: "Bearer …" }`. */
  headers?: Record<string, string>;
  /**
   * A client registered ahead with the server's authorization server (dynamic registration is
   * skipped), or `false`: no OAuth for this server even when `connectMcp` has `oauth`.
   */
  auth?: McpServerAuth | false;
};

/** Options of `loadMcpConfig`. */
export type LoadMcpConfigOptions = {
  /** Variables for `${NAME}` and `${NAME:-default}` in the file (default: `process.env`). */
  env?: Record<string, string | undefined>;
};

/**
 * Reads MCP servers from a JSON file in the format Claude Desktop, Claude Code and Cursor use:
 * `{ "mcpServers": { "<name>": { "command", "args", "env", "cwd" } | { "type": "http", "url", "headers" } } }`
 * (or VS Code's `{ "servers": { … } }`). `${NAME}`, `${NAME:-default}` and `${env:NAME}` in
 * strings are replaced from the environment, so tokens need not be written in the file; any other
 * `${…}` is an error. An entry with `"disabled": true` is left out. Keys this library does not use are ignored.
 * Throws `McpConfigError` naming the file (and the server entry) when the file cannot be read, is
 * not JSON, or an entry is not a valid server.
 */
export async function loadMcpConfig(
  path: string,
  options: LoadMcpConfigOptions = {},
): Promise<Record<string, McpServerConfig>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new McpConfigError(`cannot read MCP config ${path}: ${errorMessage(error)}`, { path, cause: error });
  }
  return parseMcpConfig(text, path, options);
}

/** `loadMcpConfig` of a file's `text` already read (`path` names it in errors). */
export function parseMcpConfig(
  text: string,
  path: string,
  options: LoadMcpConfigOptions = {},
): Record<string, McpServerConfig> {
  if (jsonNestedDeeperThan(text))
    throw new McpConfigError(`MCP config ${path} is nested more than ${maxJsonDepth} levels deep`, { path });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError(`MCP config ${path} is not valid JSON: ${errorMessage(error)}`, { path, cause: error });
  }
  // VS Code's `.vscode/mcp.json` names the same map `servers`.
  const servers = isRecord(parsed) ? (parsed["mcpServers"] ?? parsed["servers"]) : undefined;
  if (!isRecord(servers)) {
    throw new McpConfigError(`MCP config ${path}: expected an object with "mcpServers": { "<name>": { … } }`, { path });
  }
  const env = options.env ?? process.env;
  const result: Record<string, McpServerConfig> = {};
  for (const [server, entry] of Object.entries(servers)) {
    // Cline, Roo Code and Windsurf switch a server off this way; connecting to it anyway would
    // start what the user turned off.
    if (isRecord(entry) && entry["disabled"] === true) continue;
    const fail = (problem: string): never => {
      throw new McpConfigError(`MCP config ${path}: server "${server}": ${problem}`, { path, server });
    };
    // Server names come from a file: defined, not assigned, so "__proto__" stays a key and never sets the prototype.
    Object.defineProperty(result, server, {
      value: parseEntry(entry, (value, field) => expand(value, field, env, fail), fail),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return result;
}

type Expand = (value: string, field: string) => string;

function parseEntry(entry: unknown, expand: Expand, fail: (problem: string) => never): McpServerConfig {
  if (!isRecord(entry)) return fail('expected an object with "command" (stdio) or "url" (Streamable HTTP)');
  const { type } = entry;
  if (type === "sse")
    return fail(
      'the HTTP+SSE transport ("type": "sse") is not supported; use the server\'s Streamable HTTP endpoint ("type": "http")',
    );
  if (type !== undefined && type !== "stdio" && type !== "http")
    return fail(`unknown "type" ${JSON.stringify(type)}: expected "stdio" or "http"`);
  const hasCommand = entry["command"] !== undefined;
  const hasUrl = entry["url"] !== undefined;
  if (hasCommand && hasUrl) return fail('has both "command" and "url"; give one');
  if (type === "http" || (type === undefined && hasUrl)) {
    const url = expand(stringField(entry, "url", fail), "url");
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
      return fail(`"url" must be an http(s) URL, got ${JSON.stringify(url)}`);
    const config: McpHttpServerConfig = { url };
    const headers = stringRecordField(entry, "headers", fail);
    if (headers !== undefined) config.headers = expandValues(headers, "headers", expand);
    const auth = parseAuth(entry["auth"], expand, fail);
    if (auth !== undefined) config.auth = auth;
    return withSettings(config, entry, fail);
  }
  if (!hasCommand) return fail('needs "command" (stdio) or "url" (Streamable HTTP)');
  const command = expand(stringField(entry, "command", fail), "command");
  if (command === "") return fail('"command" is empty');
  const config: McpStdioServerConfig = { command };
  const args = entry["args"];
  if (args !== undefined) {
    if (!Array.isArray(args) || !args.every((arg) => typeof arg === "string"))
      return fail('"args" must be an array of strings');
    config.args = args.map((arg, index) => expand(arg, `args[${index}]`));
  }
  const env = stringRecordField(entry, "env", fail);
  if (env !== undefined) config.env = expandValues(env, "env", expand);
  if (entry["cwd"] !== undefined) config.cwd = expand(stringField(entry, "cwd", fail), "cwd");
  return withSettings(config, entry, fail);
}

function parseAuth(
  value: unknown,
  expand: Expand,
  fail: (problem: string) => never,
): McpServerAuth | false | undefined {
  if (value === undefined || value === false) return value;
  if (!isRecord(value)) return fail('"auth" must be false or { "clientId", "clientSecret"?, "scopes"? }');
  const clientId = value["clientId"];
  if (typeof clientId !== "string" || clientId === "") return fail('"auth.clientId" must be a non-empty string');
  const auth: McpServerAuth = { clientId: expand(clientId, "auth.clientId") };
  const secret = value["clientSecret"];
  if (secret !== undefined) {
    if (typeof secret !== "string") return fail('"auth.clientSecret" must be a string');
    auth.clientSecret = expand(secret, "auth.clientSecret");
  }
  const scopes = value["scopes"];
  if (scopes !== undefined) {
    if (!Array.isArray(scopes) || !scopes.every((scope) => typeof scope === "string"))
      return fail('"auth.scopes" must be an array of strings');
    auth.scopes = [...scopes];
  }
  return auth;
}

function withSettings<Config extends McpServerConfig>(
  config: Config,
  entry: Record<string, unknown>,
  fail: (problem: string) => never,
): Config {
  const deferred = entry["deferred"];
  if (deferred === undefined) return config;
  if (typeof deferred !== "boolean") return fail('"deferred" must be true or false');
  config.deferred = deferred;
  return config;
}

function stringField(entry: Record<string, unknown>, field: string, fail: (problem: string) => never): string {
  const value = entry[field];
  return typeof value === "string" ? value : fail(`"${field}" must be a string`);
}

function stringRecordField(
  entry: Record<string, unknown>,
  field: string,
  fail: (problem: string) => never,
): Record<string, string> | undefined {
  const value = entry[field];
  if (value === undefined) return undefined;
  if (!isRecord(value) || !Object.values(value).every((item) => typeof item === "string")) {
    return fail(`"${field}" must be an object of strings`);
  }
  return value as Record<string, string>;
}

function expandValues(values: Record<string, string>, field: string, expand: Expand): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, expand(value, `${field}.${key}`)]));
}

function expand(
  value: string,
  field: string,
  env: Record<string, string | undefined>,
  fail: (problem: string) => never,
): string {
  return value.replace(/\$\{([^}]*)\}/g, (match, variable: string) => {
    // `${env:NAME}` is how Cursor and VS Code write it.
    const found = /^(?:env:)?([^:]+)(?::-(.*))?$/s.exec(variable);
    // Anything else (`${input:token}`, a VS Code prompt) would otherwise reach the server as is.
    if (found === null)
      return fail(`"${field}" uses ${match}; only \${NAME}, \${NAME:-default} and \${env:NAME} are filled in`);
    const [, name, fallback] = found as unknown as [string, string, string | undefined];
    // Only strings: `${constructor}` must not fill in a function inherited from Object.prototype.
    const setting = env[name];
    if (typeof setting === "string") return setting;
    if (fallback !== undefined) return fallback;
    return fail(`"${field}" uses ${match}, which is not set`);
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
