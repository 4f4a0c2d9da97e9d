import type { JsonValue, Message, StopReason, ThinkingMessage, Usage } from "../session.ts";

/**
 * Every provider rejects a tool call without a result and a result without its call. The loop
 * never produces either, but a hand-edited or truncated session may: answer orphan calls with an
 * error result (placed with the turn's other results) and drop orphan results. Returns the input
 * array itself when there is nothing to repair.
 */
export function pairToolMessages(messages: readonly Message[]): readonly Message[] {
  const calls = new Set<string>();
  const results = new Set<string>();
  for (const message of messages) {
    if (!("type" in message)) continue;
    if (message.type === "tool_call") calls.add(message.id);
    else if (message.type === "tool_result") results.add(message.id);
  }
  let complete = calls.size === results.size;
  if (complete) for (const id of calls) if (!results.has(id)) complete = false;
  if (complete) return messages;

  const repaired: Message[] = [];
  const answered = new Set<string>();
  let turnCalls: string[] = [];
  let inResults = false;
  const flush = (): void => {
    for (const id of turnCalls) {
      if (!answered.has(id)) repaired.push({ type: "tool_result", id, output: "Error: no result was recorded for this tool call.", isError: true });
    }
    turnCalls = [];
  };
  for (const message of messages) {
    if ("role" in message && message.role !== "assistant") {
      flush();
      inResults = false;
    } else if ("type" in message && message.type === "tool_result") {
      inResults = true;
      if (!calls.has(message.id) || answered.has(message.id)) continue;
      answered.add(message.id);
    } else {
      // A model message after results starts the next turn.
      if (inResults) flush();
      inResults = false;
      if ("type" in message && message.type === "tool_call") turnCalls.push(message.id);
    }
    repaired.push(message);
  }
  flush();
  return repaired;
}

/**
 * A tool-call id that matches `^[a-zA-Z0-9_-]{1,maxLength}$`. The same id always maps to the same
 * result (so a call and its result stay paired), and an id that had to change gets a hash suffix
 * so two different ids never collide.
 */
export function safeToolId(id: string, maxLength = 64): string {
  if (id.length > 0 && id.length <= maxLength && /^[a-zA-Z0-9_-]+$/.test(id)) return id;
  const hash = fnv1a(id);
  const cleaned = id.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, maxLength - hash.length - 1);
  return `${cleaned}_${hash}`;
}

function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(36);
}

/** Tool output as the text providers expect: strings as they are, other JSON serialized. */
export function outputText(output: JsonValue): string {
  return typeof output === "string" ? output : JSON.stringify(output);
}

/**
 * Whether a thinking block may go back to `provider` as signed reasoning: it has a signature, was
 * not truncated by compaction, and came from that provider. Untagged blocks count as the
 * provider's own only where `untaggedIsOwn` (the seed's hand-written Anthropic invokeModel did not tag).
 */
export function isOwnSignedThinking(message: ThinkingMessage, provider: string, untaggedIsOwn = false): boolean {
  if (message.signature === undefined || message.signature === "" || message.compacted === true) return false;
  return message.provider === undefined ? untaggedIsOwn : message.provider === provider;
}

/** Parses a tool call's streamed JSON arguments; an empty string is `{}`, anything but an object is `undefined`. */
export function parseToolInput(text: string): Record<string, JsonValue> | undefined {
  if (text.trim() === "") return {};
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, JsonValue>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A provider's stop reason, normalized through `map` (unknown ones are `other`), with the raw one
 * kept when it differs. `end_turn` with tool calls is `tool_use`: several servers say "stop" then.
 */
export function stopFields(
  raw: string | null | undefined,
  map: Readonly<Record<string, StopReason>>,
  hasToolCalls = false,
): { stopReason?: StopReason; rawStopReason?: string } {
  if (raw === null || raw === undefined) return {};
  let stopReason = map[raw] ?? "other";
  if (stopReason === "end_turn" && hasToolCalls) stopReason = "tool_use";
  return stopReason === raw ? { stopReason } : { stopReason, rawStopReason: raw };
}

/** Usage where the provider counts cached input apart: the generic `inputTokens` includes it. */
export function usageWithCache(input: number, output: number, cacheRead: number, cacheWrite: number): Usage {
  const usage: Usage = { inputTokens: input + cacheRead + cacheWrite, outputTokens: output };
  if (cacheRead > 0) usage.cacheReadTokens = cacheRead;
  if (cacheWrite > 0) usage.cacheWriteTokens = cacheWrite;
  return usage;
}
