export { connectMcp, withMcp } from "./connect.ts";
export type { McpConnection, McpOptions } from "./connect.ts";
export { loadMcpConfig } from "./config.ts";
export type { LoadMcpConfigOptions, McpHttpServerConfig, McpServerConfig, McpStdioServerConfig } from "./config.ts";
export { McpConfigError, McpConnectionError, isMcpConfigError, isMcpConnectionError } from "./errors.ts";
