export { connectMcp, withMcp } from "./connect.ts";
export type { McpConnection, McpOptions, McpServerInfo } from "./connect.ts";
export { loadMcpConfig } from "./config.ts";
export type { LoadMcpConfigOptions, McpHttpServerConfig, McpServerConfig, McpStdioServerConfig } from "./config.ts";
export { McpConfigError, McpConnectionError, isMcpConfigError, isMcpConnectionError } from "./errors.ts";
export { toolFingerprint } from "./tool-fingerprint.ts";
export { fileTrustStore, memoryTrustStore } from "./trust-store.ts";
export type { McpPin, McpPins, McpTrustStore } from "./trust-store.ts";
export type { McpHeldTool, McpToolsChange } from "./tool-registry.ts";
