import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { PromptMessage } from "@modelcontextprotocol/sdk/types.js";
import { AgentError, describeValue } from "../errors.ts";
import type { AssistantMessage, UserMessage } from "../session.ts";
import { contentPartOf } from "./mcp-tools.ts";

/** One prompt a server lists. */
export type McpPrompt = {
  server: string;
  name: string;
  description?: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
};

/** A prompt filled in by its server: its messages as session messages, ready to add to a session. */
export type McpPromptMessages = { description?: string; messages: (UserMessage | AssistantMessage)[] };

/** The prompt methods of a connection (see `McpConnection`). */
export type McpPrompts = {
  /** The prompts of `server`, or of every server that has prompts, in configuration order (all pages). */
  listPrompts: (server?: string) => Promise<McpPrompt[]>;
  /** `prompts/get` of `name` with `args`. */
  getPrompt: (server: string, name: string, args?: Record<string, string>) => Promise<McpPromptMessages>;
};

type PromptServer = { server: string; client: Client };

export function mcpPrompts(
  servers: readonly PromptServer[],
  find: (server: unknown) => PromptServer,
  requestOptions: { timeout?: number },
): McpPrompts {
  return {
    listPrompts: async (server) => {
      const chosen =
        server === undefined
          ? servers.filter(({ client }) => client.getServerCapabilities()?.prompts !== undefined)
          : [find(server)];
      const lists = await Promise.all(chosen.map((entry) => listOf(entry, requestOptions)));
      return lists.flat();
    },
    getPrompt: async (server, name, args) => {
      const { client } = find(server);
      if (typeof name !== "string")
        throw new AgentError(`MCP getPrompt: name must be a string; got ${describeValue(name)}`);
      const answer = await client.getPrompt(
        { name, ...(args === undefined ? {} : { arguments: args }) },
        requestOptions,
      );
      const filled: McpPromptMessages = { messages: answer.messages.map(sessionMessage) };
      if (answer.description !== undefined) filled.description = answer.description;
      return filled;
    },
  };
}

async function listOf({ server, client }: PromptServer, requestOptions: { timeout?: number }): Promise<McpPrompt[]> {
  const found: McpPrompt[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listPrompts(cursor === undefined ? {} : { cursor }, requestOptions);
    for (const prompt of page.prompts) {
      const entry: McpPrompt = { server, name: prompt.name };
      if (prompt.description !== undefined) entry.description = prompt.description;
      if (prompt.arguments !== undefined)
        entry.arguments = prompt.arguments.map(({ name, description, required }) => ({
          name,
          ...(description === undefined ? {} : { description }),
          ...(required === undefined ? {} : { required }),
        }));
      found.push(entry);
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return found;
}

// A user message keeps images and files as parts; an assistant message holds text only, so other
// content becomes its JSON description there.
function sessionMessage({ role, content }: PromptMessage): UserMessage | AssistantMessage {
  const part = contentPartOf(content);
  if (role === "assistant")
    return {
      role: "assistant",
      content: part.type === "text" ? part.text : JSON.stringify({ type: part.type, mediaType: part.mediaType }),
    };
  return { role: "user", content: part.type === "text" ? part.text : [part] };
}
