import type { Message, Session } from "../session.ts";
import { toolSchemas, type ToolDefinition } from "../tools/tool.ts";
import { messageCharacters } from "./content-size.ts";

/** One part of the context and its estimated tokens; `items` splits it (by tool) where that helps. */
export type ContextPart = { name: string; tokens: number; items?: { name: string; tokens: number }[] };

/** Where a session's context goes: see `contextUsage`. */
export type ContextUsage = {
  /** The sum of the parts. */
  total: number;
  parts: ContextPart[];
  /** The input tokens the provider reported for the last model turn that reported usage. */
  lastInputTokens?: number;
};

/** What else goes into each request besides the session. */
export type ContextUsageOptions = {
  /** The tools sent with each request (counted as the model sees them). */
  tools?: readonly ToolDefinition[];
  /** The system prompt, counted only when the session has no system message. */
  systemPrompt?: string;
};

/**
 * Estimates where a session's context goes, in tokens as compaction estimates them (a token per 4
 * characters of JSON), by part, always in this order: `system`, `tools` (items per tool), `user`,
 * `assistant`, `thinking`, `tool_calls`, `tool_results` (items per tool name), and `cleared`
 * (the placeholders of cleared outputs and the markers of offloaded ones). `total` is their sum.
 */
export function contextUsage(session: Session, options: ContextUsageOptions = {}): ContextUsage {
  const parts = new Map<string, ContextPart>(partNames.map((name) => [name, { name, tokens: 0 }]));
  const add = (part: string, characters: number, item?: string): void => {
    const entry = parts.get(part)!;
    const tokens = Math.ceil(characters / 4);
    entry.tokens += tokens;
    if (item === undefined) return;
    const items = (entry.items ??= []);
    const existing = items.find((candidate) => candidate.name === item);
    if (existing === undefined) items.push({ name: item, tokens });
    else existing.tokens += tokens;
  };
  for (const schema of toolSchemas(options.tools ?? [])) add("tools", JSON.stringify(schema).length, schema.name);
  const { messages } = session;
  if (options.systemPrompt !== undefined && !messages.some(isSystem))
    add("system", JSON.stringify({ role: "system", content: options.systemPrompt }).length);
  const toolNames = new Map<string, string>();
  let lastInputTokens: number | undefined;
  for (const message of messages) {
    if ("usage" in message && message.usage !== undefined) lastInputTokens = message.usage.inputTokens;
    const characters = messageCharacters(message);
    if ("role" in message) {
      add(message.role, characters);
    } else if (message.type === "thinking") {
      add("thinking", characters);
    } else if (message.type === "tool_call") {
      toolNames.set(message.id, message.name);
      add("tool_calls", characters, message.name);
    } else {
      const name = toolNames.get(message.id) ?? "unknown";
      if (message.kept === "cleared") {
        add("cleared", characters, name);
      } else if (message.kept === "offloaded" && typeof message.output === "string") {
        const marker = markerLength(message.output);
        add("cleared", marker, name);
        add("tool_results", characters - marker, name);
      } else {
        add("tool_results", characters, name);
      }
    }
  }
  // Items largest first: where the tokens go is what the reader looks for.
  for (const part of parts.values()) part.items?.sort((first, second) => second.tokens - first.tokens);
  const list = [...parts.values()];
  const usage: ContextUsage = { total: list.reduce((sum, part) => sum + part.tokens, 0), parts: list };
  if (lastInputTokens !== undefined) usage.lastInputTokens = lastInputTokens;
  return usage;
}

const partNames = ["system", "tools", "user", "assistant", "thinking", "tool_calls", "tool_results", "cleared"];

function isSystem(message: Message): boolean {
  return "role" in message && message.role === "system";
}

// The marker an offloaded output carries between its head and tail.
function markerLength(output: string): number {
  const match = /\n\[… [\d,]+ characters omitted[^\n]*…\]\n/.exec(output);
  return match === null ? 0 : match[0].length;
}
