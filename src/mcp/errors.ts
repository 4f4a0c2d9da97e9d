import { AgentError, errorMessage, isAgentError } from "../errors.ts";

/**
 * Thrown by `connectMcp` (and `withMcp`) when a server cannot be reached: its command does not
 * start, its URL does not answer, it fails the MCP initialization or listing its tools. The
 * message names the server; every other server of the call has been closed by then.
 */
export class McpConnectionError extends AgentError {
  override name = "McpConnectionError";
  /** The server's key in the configuration. */
  readonly server: string;

  constructor(message: string, details: { server: string; cause?: unknown }) {
    super(message, { cause: details.cause });
    this.server = details.server;
  }
}

export function isMcpConnectionError(error: unknown): error is McpConnectionError {
  return isAgentError(error) && error.name === "McpConnectionError";
}

/**
 * A configuration the MCP client cannot use: a config file that is unreadable, not JSON or has a
 * bad server entry (`path` set), or servers whose tools would share a name (`server` set).
 */
export class McpConfigError extends AgentError {
  override name = "McpConfigError";
  /** The config file, when the problem is in one. */
  readonly path: string | undefined;
  /** The server entry at fault, when there is one. */
  readonly server: string | undefined;

  constructor(message: string, details: { path?: string; server?: string; cause?: unknown } = {}) {
    super(message, { cause: details.cause });
    this.path = details.path;
    this.server = details.server;
  }
}

export function isMcpConfigError(error: unknown): error is McpConfigError {
  return isAgentError(error) && error.name === "McpConfigError";
}

/**
 * The message of `error`, followed by its cause's in parentheses: fetch() says only "fetch failed"
 * or "terminated" and keeps the reason (ECONNREFUSED, a reset, DNS…) in its cause.
 */
export function messageWithCause(error: unknown): string {
  const { cause } = (typeof error === "object" && error !== null ? error : {}) as { cause?: unknown };
  return cause instanceof Error ? `${errorMessage(error)} (${errorMessage(cause)})` : errorMessage(error);
}
