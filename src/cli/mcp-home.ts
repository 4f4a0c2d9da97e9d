import { join } from "node:path";
import type { McpServerConfig } from "../mcp/config.ts";
import { fileTokenStore, type McpTokenStore } from "../mcp/token-store.ts";
import { fileTrustStore, type McpPins, type McpTrustStore } from "../mcp/trust-store.ts";

/** Where the CLI keeps MCP sign-ins: `<home>/mcp-auth.json`, mode 0600, keyed by server URL. */
export function mcpAuthPath(home: string): string {
  return join(home, "mcp-auth.json");
}

/** Where the CLI pins the tool definitions the user trusts: `<home>/mcp-pins.json`, mode 0600. */
export function mcpPinsPath(home: string): string {
  return join(home, "mcp-pins.json");
}

/** The CLI's sign-ins (`fileTokenStore` at `mcpAuthPath`). */
export function cliTokenStore(home: string): McpTokenStore {
  return fileTokenStore(mcpAuthPath(home));
}

/**
 * The CLI's pins (`fileTrustStore` at `mcpPinsPath`), kept under what each server is (its URL, or
 * its command line) rather than its name in one workspace's config: two workspaces each naming a
 * different server "github" do not share pins, and a server keeps its pins under another name.
 */
export function cliTrustStore(home: string, servers: Record<string, McpServerConfig>): McpTrustStore {
  const file = fileTrustStore(mcpPinsPath(home));
  const identities = Object.entries(servers).map(([name, config]) => [name, serverIdentity(config)] as const);
  return {
    load: async () => {
      const stored = await file.load();
      const pins: McpPins = {};
      for (const [name, identity] of identities)
        if (Object.hasOwn(stored, identity)) define(pins, name, stored[identity]!);
      return pins;
    },
    save: async (pins) => {
      const stored = await file.load();
      for (const [name, identity] of identities) if (Object.hasOwn(pins, name)) define(stored, identity, pins[name]!);
      await file.save(stored);
    },
  };
}

/** What a server is, whatever it is called: `url <url>` or `command <command> <args…>` (JSON, unambiguous). */
export function serverIdentity(config: McpServerConfig): string {
  return "url" in config ? `url ${config.url}` : `command ${JSON.stringify([config.command, ...(config.args ?? [])])}`;
}

// Keys are names and URLs from a config: defined, not assigned, so "__proto__" stays a key.
function define<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
