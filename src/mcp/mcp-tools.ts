import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, ContentBlock, Progress, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { base64Size, type ContentPart } from "../content-parts.ts";
import type { JsonObject, JsonValue } from "../session.ts";
import { toolContent, type ToolContent } from "../tools/tool-content.ts";
import type { Tool, ToolContext } from "../tools/tool.ts";
import { McpConfigError, messageWithCause } from "./errors.ts";

/** Name tools `<server>__<tool>` or keep the tool's own name, sanitized to `^[a-zA-Z0-9_-]{1,64}$`. */
export function loopToolName(server: string, tool: string, prefix: boolean): string {
  return sanitizeName(prefix ? `${server}__${tool}` : tool);
}

function sanitizeName(name: string): string {
  return (name.replace(/[^a-zA-Z0-9_-]/g, "_") || "_").slice(0, 64);
}

export function nameClash(
  name: string,
  first: { server: string; tool: string },
  second: { server: string; tool: string },
  prefixed: boolean,
): McpConfigError {
  if (!prefixed && first.server !== second.server) {
    return new McpConfigError(
      `MCP servers "${first.server}" and "${second.server}" both have a tool named "${name}"; pass { prefix: true } to name tools <server>__<tool>`,
      { server: second.server },
    );
  }
  return new McpConfigError(
    `MCP tools "${first.tool}" (server "${first.server}") and "${second.tool}" (server "${second.server}") would both be named "${name}"; rename a server or drop one of them`,
    { server: second.server },
  );
}

/** A connected server, as its tools' calls reach it. */
export type ToolServer = {
  /** The server's key in the configuration. */
  server: string;
  client: Client;
  /** Milliseconds a `tools/call` may take; restarted by each progress notification. */
  timeout: number | undefined;
  /**
   * The calls in flight on this server, by tool call id, in the order they started: what an
   * elicitation the server sends meanwhile belongs to.
   */
  calls: Map<string, ToolContext>;
};

/** Throws `McpConfigError` when the input schema of `mcpTool` is too deep or too large to take. */
export function checkToolSchema(server: string, mcpTool: McpTool): void {
  const problem = schemaProblem(mcpTool.inputSchema);
  if (problem !== undefined)
    throw new McpConfigError(`MCP server "${server}": tool "${mcpTool.name}" refused: its input schema ${problem}`, {
      server,
    });
}

/**
 * Says why a call of a loop tool made earlier must not reach its server (the tool was removed, or
 * changed and is held), or `undefined` when it may.
 */
export type CallCheck = () => string | undefined;

/**
 * The loop tool of `mcpTool`. Throws `McpConfigError` when its input schema is too deep or too
 * large. `check` runs before each call: a refusal becomes the call's error result.
 */
export function loopTool(name: string, owner: ToolServer, mcpTool: McpTool, check: CallCheck): Tool {
  const { server } = owner;
  checkToolSchema(server, mcpTool);
  const { $schema: _dialect, ...inputSchema } = mcpTool.inputSchema;
  // MCP allows `{ "type": "object" }` for a tool without parameters (the Go SDK and FastMCP send
  // it); OpenAI rejects the whole request for it: "object schema missing properties".
  inputSchema.properties ??= {};
  const tool: Tool = {
    name,
    // Only what `toolFingerprint` covers reaches the model: a top-level `title` it leaves out
    // could change after the tool was pinned and say anything.
    description: mcpTool.description ?? mcpTool.annotations?.title ?? "",
    input_schema: inputSchema as JsonObject,
    handler: (input: JsonObject, context: ToolContext) => {
      const refusal = check();
      if (refusal !== undefined) throw new Error(refusal);
      return callTool(owner, mcpTool.name, input, context);
    },
  };
  // Starting a call before the model's response is complete is only safe without side effects,
  // and MCP tools have them unless the server says otherwise.
  if (mcpTool.annotations?.readOnlyHint !== true) tool.eager = false;
  // Its structured result is the call's output: code mode types the tool's function by it.
  if (mcpTool.outputSchema !== undefined) {
    const { $schema: _outputDialect, ...outputSchema } = mcpTool.outputSchema;
    tool.outputSchema = outputSchema as JsonObject;
  }
  return tool;
}

async function callTool(
  { server, client, timeout, calls }: ToolServer,
  name: string,
  input: JsonObject,
  context: ToolContext,
): Promise<JsonValue> {
  let answer: Awaited<ReturnType<Client["callTool"]>>;
  calls.set(context.id, context);
  try {
    answer = await client.callTool({ name, arguments: input }, undefined, {
      signal: context.signal,
      ...(timeout === undefined ? {} : { timeout }),
      // A call that reports progress is alive: each report restarts the timeout.
      resetTimeoutOnProgress: true,
      onprogress: (progress) => context.update(progressValue(progress)),
    });
  } catch (error) {
    // The loop words aborts and timeouts itself.
    if (context.signal.aborted) throw error;
    throw new Error(`MCP server "${server}": ${messageWithCause(error)}`, { cause: error });
  } finally {
    calls.delete(context.id);
  }
  // Servers on the 2024-10-07 protocol answer with `toolResult` instead of content.
  if (!Array.isArray(answer["content"])) return (answer["toolResult"] ?? "") as JsonValue;
  const result = answer as CallToolResult;
  // A thrown error is how a handler gives an error result; its message is what the model reads.
  if (result.isError === true) throw new Error(bounded(errorText(result, server, name)) as string);
  if (result.structuredContent === undefined && result.content.some(isBinary)) return richOutput(result.content);
  return bounded(toolOutput(result));
}

/** The most base64 one binary part of an MCP result may bring (20 MiB of data); a larger one becomes a note. */
export const maxMcpPartBytes = 20 * 1024 * 1024;

function isBinary(part: ContentBlock): boolean {
  if (part.type === "image" || part.type === "audio") return true;
  return part.type === "resource" && "blob" in part.resource && typeof part.resource.blob === "string";
}

/**
 * A result with images, audio or binary resources reaches the model as content parts: an image as
 * an image, audio and binary resources as files, text as text. The text parts are bounded as a
 * text result is; a binary part over `maxMcpPartBytes` is replaced by a note saying what it was.
 */
export function richOutput(parts: readonly ContentBlock[]): ToolContent {
  const content: ContentPart[] = [];
  let textLeft = maxMcpResultLength;
  for (const part of parts) {
    const converted = contentPartOf(part);
    if (converted.type === "text") {
      const text =
        converted.text.length <= textLeft ? converted.text : `${converted.text.slice(0, textLeft)}\n… [MCP text cut]`;
      textLeft = Math.max(0, textLeft - converted.text.length);
      content.push({ type: "text", text });
    } else if ("data" in converted && base64Size(converted.data) > maxMcpPartBytes) {
      const size = base64Size(converted.data);
      content.push({
        type: "text",
        text: `[${converted.type}: ${converted.mediaType}, ${size} bytes, over the ${maxMcpPartBytes}-byte limit: omitted]`,
      });
    } else content.push(converted);
  }
  return toolContent(content);
}

export function contentPartOf(part: ContentBlock): ContentPart {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text };
    case "image":
      // A server's "image" of another type (a page, a PDF) goes on as the file it is.
      return /^image\//i.test(part.mimeType)
        ? { type: "image", mediaType: part.mimeType, data: part.data }
        : { type: "file", mediaType: part.mimeType, data: part.data };
    case "audio":
      return { type: "file", mediaType: part.mimeType, data: part.data };
    case "resource": {
      const { resource } = part;
      if ("blob" in resource && typeof resource.blob === "string") {
        const mediaType = resource.mimeType ?? "application/octet-stream";
        if (mediaType.startsWith("image/")) return { type: "image", mediaType, data: resource.blob };
        const filename = resource.uri.split("/").pop();
        return { type: "file", mediaType, data: resource.blob, ...(filename ? { filename } : {}) };
      }
      return { type: "text", text: JSON.stringify(contentValue(part)) };
    }
    default:
      return { type: "text", text: JSON.stringify(contentValue(part)) };
  }
}

/** The longest MCP result (or error text) a call gives, in characters of its JSON; more is cut where it enters. */
export const maxMcpResultLength = 100_000;
/** The deepest nesting and the largest JSON size of a tool's input schema a server may list. */
export const maxSchemaDepth = 64;
export const maxSchemaLength = 100_000;

// A result over the limit becomes its text form, cut, saying how much was left out.
function bounded(output: JsonValue): JsonValue {
  const text = typeof output === "string" ? output : JSON.stringify(output);
  if (text.length <= maxMcpResultLength) return output;
  return `${text.slice(0, maxMcpResultLength)}\n… [MCP result cut: ${text.length - maxMcpResultLength} more characters of ${text.length}]`;
}

// Walked without recursion, so a schema nested 100,000 levels deep is measured, not a stack overflow.
function schemaProblem(schema: unknown): string | undefined {
  const pending: [unknown, number][] = [[schema, 1]];
  while (pending.length > 0) {
    const [value, depth] = pending.pop()!;
    if (typeof value !== "object" || value === null) continue;
    if (depth > maxSchemaDepth) return `is nested more than ${maxSchemaDepth} levels deep`;
    for (const child of Object.values(value)) pending.push([child, depth + 1]);
  }
  const length = JSON.stringify(schema).length;
  return length > maxSchemaLength ? `is ${length} characters of JSON, more than ${maxSchemaLength}` : undefined;
}

function progressValue({ progress, total, message }: Progress): JsonObject {
  const value: JsonObject = { progress };
  if (total !== undefined) value["total"] = total;
  if (message !== undefined) value["message"] = message;
  return value;
}

/**
 * What the model gets: `structuredContent` when the server sent it (the content is then its text
 * form), else the text parts joined by newlines, else (other kinds of content) a list of parts.
 */
function toolOutput(result: CallToolResult): JsonValue {
  if (result.structuredContent !== undefined) return result.structuredContent as JsonObject;
  const parts = result.content;
  if (parts.every((part) => part.type === "text")) return parts.map((part) => part.text).join("\n");
  return parts.map(contentValue);
}

function errorText(result: CallToolResult, server: string, name: string): string {
  const texts = result.content.flatMap((part) => (part.type === "text" ? [part.text] : []));
  if (texts.length > 0) return texts.join("\n");
  if (result.content.length > 0) return JSON.stringify(result.content.map(contentValue));
  return `tool "${name}" of MCP server "${server}" failed without a message`;
}

/**
 * One content part as plain JSON. Binary data (images, audio, blobs) is left out, with its size:
 * the session holds no binary parts, and base64 in a text result costs tokens without showing
 * the model anything.
 */
function contentValue(part: ContentBlock): JsonValue {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text };
    case "image":
    case "audio":
      return { type: part.type, mimeType: part.mimeType, bytes: base64Size(part.data) };
    case "resource": {
      const { resource } = part;
      const value: JsonObject = { type: "resource", uri: resource.uri };
      if (resource.mimeType !== undefined) value["mimeType"] = resource.mimeType;
      if ("text" in resource && typeof resource.text === "string") value["text"] = resource.text;
      else if ("blob" in resource && typeof resource.blob === "string") value["bytes"] = base64Size(resource.blob);
      return value;
    }
    case "resource_link": {
      const value: JsonObject = { type: "resource_link", uri: part.uri, name: part.name };
      if (part.description !== undefined) value["description"] = part.description;
      if (part.mimeType !== undefined) value["mimeType"] = part.mimeType;
      return value;
    }
    default:
      return JSON.parse(JSON.stringify(part)) as JsonValue;
  }
}
