import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { readJsonFile, serially, writeJsonFile } from "./json-file.ts";

/**
 * What is kept for one MCP server's OAuth sign-in, in the SDK's own types: the tokens, the client
 * registration, and what discovery found (so a later connection skips it). Secrets: keep it where
 * only the user can read it.
 */
export type McpTokenRecord = {
  tokens?: OAuthTokens;
  client?: OAuthClientInformationMixed;
  discovery?: OAuthDiscoveryState;
};

/**
 * Where OAuth sign-ins are kept, keyed by the server's URL. Each method may be async. `get` of a
 * key never set resolves `undefined`.
 */
export type McpTokenStore = {
  get: (key: string) => McpTokenRecord | undefined | Promise<McpTokenRecord | undefined>;
  set: (key: string, record: McpTokenRecord) => void | Promise<void>;
  delete: (key: string) => void | Promise<void>;
};

/** Sign-ins kept in memory for the life of the process: the default. */
export function memoryTokenStore(): McpTokenStore {
  const records = new Map<string, McpTokenRecord>();
  return {
    get: (key) => {
      const record = records.get(key);
      return record === undefined ? undefined : structuredClone(record);
    },
    set: (key, record) => void records.set(key, structuredClone(record)),
    delete: (key) => void records.delete(key),
  };
}

/**
 * Sign-ins kept in one JSON file at `path` (the CLI's is `<home>/mcp-auth.json`), rewritten whole
 * and atomically with mode 0600 on each change, one change at a time. A file that is not a JSON
 * object makes `get` throw rather than be overwritten.
 */
export function fileTokenStore(path: string): McpTokenStore {
  const queue = serially();
  const read = async (): Promise<Record<string, McpTokenRecord>> =>
    ((await readJsonFile(path)) as Record<string, McpTokenRecord> | undefined) ?? {};
  const change = (apply: (records: Record<string, McpTokenRecord>) => void): Promise<void> =>
    queue(async () => {
      const records = await read();
      apply(records);
      await writeJsonFile(path, records);
    });
  return {
    get: async (key) => {
      const records = await read();
      return Object.hasOwn(records, key) ? records[key] : undefined;
    },
    // Keys are URLs: defined, not assigned, so no key can reach the prototype.
    set: (key, record) =>
      change((records) =>
        Object.defineProperty(records, key, { value: record, enumerable: true, writable: true, configurable: true }),
      ),
    delete: (key) =>
      change((records) => {
        delete records[key];
      }),
  };
}
