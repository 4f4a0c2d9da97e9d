import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import { base64Size, type ContentPart } from "../content-parts.ts";
import { AgentError, describeValue } from "../errors.ts";
import type { JsonObject } from "../session.ts";
import { toolContent } from "../tools/tool-content.ts";
import type { Tool } from "../tools/tool.ts";
import { maxMcpPartBytes, maxMcpResultLength } from "./mcp-tools.ts";

/** One resource a server lists. */
export type McpResource = { server: string; uri: string; name: string; mimeType?: string };

/** What `resources/updated` says changed: `subscribeResource` passes it on. */
export type McpResourceUpdate = { server: string; uri: string };

/** The resource methods of a connection (see `McpConnection`). */
export type McpResources = {
  /** The resources of `server`, or of every server that has resources, in configuration order (all pages). */
  listResources: (server?: string) => Promise<McpResource[]>;
  /** The server's `resources/read` answer for `uri`. */
  readResource: (server: string, uri: string) => Promise<ReadResourceResult>;
  /**
   * The resource as content parts: text as text (cut past 100,000 characters), `image/*` blobs as
   * images, other blobs as files (named after the URI's last segment); a blob over 20 MiB becomes
   * a note saying what it was.
   */
  resourceParts: (server: string, uri: string) => Promise<ContentPart[]>;
  /**
   * Subscribes to `uri` (`resources/subscribe`); `onUpdated` runs on each `resources/updated` for
   * it. Resolves with the function that unsubscribes (`resources/unsubscribe` once the last
   * listener of that URI is gone).
   */
  subscribeResource: (
    server: string,
    uri: string,
    onUpdated: (update: McpResourceUpdate) => void,
  ) => Promise<() => Promise<void>>;
};

/** A connected server as the resource methods reach it. */
export type ResourceServer = {
  server: string;
  client: Client;
  /** Listeners of `resources/updated` by URI; `resourceUpdated` dispatches to them. */
  subscriptions: Map<string, Set<(update: McpResourceUpdate) => void>>;
};

/**
 * The resource methods over `servers`. `find` returns the named server or throws naming it;
 * `requestOptions` bound each request.
 */
export function mcpResources(
  servers: readonly ResourceServer[],
  find: (server: unknown) => ResourceServer,
  requestOptions: { timeout?: number },
): McpResources {
  const read = async (server: string, uri: string): Promise<ReadResourceResult> => {
    const { client } = find(server);
    if (typeof uri !== "string")
      throw new AgentError(`MCP readResource: uri must be a string; got ${describeValue(uri)}`);
    return client.readResource({ uri }, requestOptions);
  };
  return {
    listResources: async (server) => {
      const chosen = server === undefined ? servers.filter(hasResources) : [find(server)];
      const lists = await Promise.all(chosen.map((entry) => listOf(entry, requestOptions)));
      return lists.flat();
    },
    readResource: read,
    resourceParts: async (server, uri) => partsOf(await read(server, uri)),
    subscribeResource: async (server, uri, onUpdated) => {
      const entry = find(server);
      if (typeof onUpdated !== "function")
        throw new AgentError(`MCP subscribeResource: onUpdated must be a function; got ${describeValue(onUpdated)}`);
      let listeners = entry.subscriptions.get(uri);
      if (listeners === undefined) {
        listeners = new Set();
        entry.subscriptions.set(uri, listeners);
        try {
          await entry.client.subscribeResource({ uri }, requestOptions);
        } catch (error) {
          entry.subscriptions.delete(uri);
          throw error;
        }
      }
      listeners.add(onUpdated);
      let subscribed = true;
      return async () => {
        if (!subscribed) return;
        subscribed = false;
        listeners.delete(onUpdated);
        if (listeners.size > 0 || entry.subscriptions.get(uri) !== listeners) return;
        entry.subscriptions.delete(uri);
        await entry.client.unsubscribeResource({ uri }, requestOptions);
      };
    },
  };
}

/** Passes a `resources/updated` notification to the listeners of its URI. */
export function resourceUpdated(entry: ResourceServer, uri: string): void {
  for (const listener of [...(entry.subscriptions.get(uri) ?? [])]) {
    // A listener that throws must not keep the others from hearing it.
    try {
      listener({ server: entry.server, uri });
    } catch {
      // Ignored: it is the listener's own failure.
    }
  }
}

/**
 * `list_resources` (`{ server? }`) and `read_resource` (`{ server, uri }`): the connection's
 * resources as tools, for a model to browse. `read_resource` answers with content parts.
 */
export function resourceTools(resources: McpResources): Tool[] {
  return [
    {
      name: "list_resources",
      description:
        "List the resources (documents, files, data) the connected MCP servers offer: server, uri, name and mimeType of each. Give server to list only that server's.",
      input_schema: { type: "object", properties: { server: { type: "string" } } },
      handler: async (input: JsonObject) => {
        const listed = await resources.listResources(input["server"] as string | undefined);
        const text = JSON.stringify(listed);
        return text.length <= maxMcpResultLength ? listed : `${text.slice(0, maxMcpResultLength)}\n… [list cut]`;
      },
    },
    {
      name: "read_resource",
      description: "Read one resource of an MCP server by its server and uri (from list_resources).",
      input_schema: {
        type: "object",
        properties: { server: { type: "string" }, uri: { type: "string" } },
        required: ["server", "uri"],
      },
      handler: async (input: JsonObject) =>
        toolContent(await resources.resourceParts(input["server"] as string, input["uri"] as string)),
    },
  ];
}

function hasResources({ client }: ResourceServer): boolean {
  return client.getServerCapabilities()?.resources !== undefined;
}

async function listOf(entry: ResourceServer, requestOptions: { timeout?: number }): Promise<McpResource[]> {
  const found: McpResource[] = [];
  let cursor: string | undefined;
  do {
    const page = await entry.client.listResources(cursor === undefined ? {} : { cursor }, requestOptions);
    for (const { uri, name, mimeType } of page.resources)
      found.push({ server: entry.server, uri, name, ...(mimeType === undefined ? {} : { mimeType }) });
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return found;
}

function partsOf({ contents }: ReadResourceResult): ContentPart[] {
  const parts: ContentPart[] = [];
  let textLeft = maxMcpResultLength;
  for (const content of contents) {
    if ("text" in content && typeof content.text === "string") {
      const text =
        content.text.length <= textLeft ? content.text : `${content.text.slice(0, textLeft)}\n… [MCP text cut]`;
      textLeft = Math.max(0, textLeft - content.text.length);
      parts.push({ type: "text", text });
      continue;
    }
    if (!("blob" in content) || typeof content.blob !== "string") continue;
    const mediaType = content.mimeType ?? "application/octet-stream";
    const size = base64Size(content.blob);
    if (size > maxMcpPartBytes) {
      parts.push({
        type: "text",
        text: `[${content.uri}: ${mediaType}, ${size} bytes, over the ${maxMcpPartBytes}-byte limit: omitted]`,
      });
      continue;
    }
    if (/^image\//i.test(mediaType)) parts.push({ type: "image", mediaType, data: content.blob });
    else {
      const filename = content.uri.split("/").pop();
      parts.push({ type: "file", mediaType, data: content.blob, ...(filename ? { filename } : {}) });
    }
  }
  return parts;
}
