// What the scripted coding-session benches (context.ts, cost.ts) share: the deterministic script's
// randomness, tool outputs that hide a fact in their middle, Anthropic's prompt cache billed on the
// adapter's own request bodies, a summarizer that keeps what summaries keep, and the count of facts
// the model can still reach at the end.
import { createHash } from "node:crypto";
import { keptOutput, type InvokeModel, type Session, type ToolSchema } from "../src/index.ts";
import { toAnthropicRequest } from "../src/providers/anthropic/anthropic.ts";

/** A token per 4 characters, as compaction estimates them. */
export const tokensOf = (characters: number): number => Math.ceil(characters / 4);

/** A deterministic pseudo-random sequence in [0, 1), so every strategy sees the same script. */
export function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** `size` characters of `line`s numbered in turn, with `fact` on the line in the middle. */
export function outputWithFact(size: number, line: string, fact: string): string {
  const lines: string[] = [];
  let length = 0;
  for (let index = 0; length < size; index++) {
    const text = index === Math.floor(size / line.length / 2) ? `  // ${fact}` : `${line} ${index}`;
    lines.push(text);
    length += text.length + 1;
  }
  return lines.join("\n");
}

/** What the requests of one run cost: tokens sent, billed equivalents, read from the cache. */
export type Billing = { calls: number; input: number; billed: number; read: number; peak: number; over: number };

export const emptyBilling = (): Billing => ({ calls: 0, input: 0, billed: 0, read: 0, peak: 0, over: 0 });

/**
 * Anthropic's prompt cache fed the adapter's own request bodies (`toAnthropicRequest`, its
 * breakpoints): a request reads the longest prefix cached at a block boundary up to 20 blocks
 * before one of its breakpoints (0.1x), writes the rest up to its last breakpoint (1.25x) and pays
 * 1x for what follows. Adds each request to `totals` (`over`: requests past `contextWindow`) and
 * returns its tokens.
 */
export function anthropicCacheBilling(
  totals: Billing,
  contextWindow: number,
): (tools: readonly ToolSchema[], session: Session) => number {
  const cached = new Set<string>();
  return (sent, session) => {
    const request = toAnthropicRequest(session, sent, { model: "claude-sonnet-4-5", maxTokens: 8_192 });
    const blocks: { text: string; breakpoint: boolean }[] = [];
    const add = (block: Record<string, unknown>, prefix = ""): void => {
      const { cache_control: mark, ...rest } = block;
      blocks.push({ text: prefix + JSON.stringify(rest), breakpoint: mark !== undefined });
    };
    for (const schema of request.tools ?? []) add(schema as Record<string, unknown>);
    for (const block of request.system ?? []) add(block as Record<string, unknown>);
    for (const message of request.messages)
      message.content.forEach((block, index) =>
        add(block as Record<string, unknown>, index === 0 ? `${message.role}:` : ""),
      );
    let key = "";
    let tokens = 0;
    const keys: string[] = [];
    const ends: number[] = [];
    for (const block of blocks) {
      key = createHash("sha1").update(key).update(block.text).digest("hex");
      tokens += tokensOf(block.text.length);
      keys.push(key);
      ends.push(tokens);
    }
    let read = 0;
    let lastBreakpoint = -1;
    blocks.forEach((block, index) => {
      if (!block.breakpoint) return;
      lastBreakpoint = index;
      for (let back = index; back >= 0 && back >= index - 20; back--)
        if (cached.has(keys[back]!)) {
          read = Math.max(read, ends[back]!);
          break;
        }
    });
    for (const [index, block] of blocks.entries()) if (block.breakpoint) cached.add(keys[index]!);
    const written = lastBreakpoint < 0 ? 0 : Math.max(0, ends[lastBreakpoint]! - read);
    totals.calls++;
    totals.input += tokens;
    totals.read += read;
    totals.peak = Math.max(totals.peak, tokens);
    totals.billed += read * 0.1 + written * 1.25 + (tokens - read - written);
    if (tokens > contextWindow) totals.over++;
    return tokens;
  };
}

/**
 * A summarizer that keeps what a summary keeps: the files touched, not their contents. Its own
 * call is billed to `totals()` too, uncached.
 */
export function scriptedSummarizer(totals: () => Billing): InvokeModel {
  return (_tools, session) => {
    const transcript = session.messages.map((message) => ("content" in message ? message.content : "")).join("\n");
    const files = [...new Set(transcript.match(/src\/module-\d+\.ts/g) ?? [])];
    totals().input += tokensOf(transcript.length);
    totals().billed += tokensOf(transcript.length);
    return [
      {
        role: "assistant",
        content: `The agent is fixing the parser. Files read: ${files.join(", ")}. Tests were run and passed.`,
      },
    ];
  };
}

/** How many of the facts (one per turn, `call_<turn>`'s output) the session or `recall_output` still holds. */
export async function reachableFacts(session: Session, facts: readonly string[]): Promise<number> {
  const text = JSON.stringify(session.messages);
  let reachable = 0;
  for (const [turn, fact] of facts.entries()) {
    const kept = await keptOutput(session, `call_${turn}`);
    if (text.includes(fact) || (typeof kept === "string" && kept.includes(fact))) reachable++;
  }
  return reachable;
}

export function format(count: number): string {
  return Math.round(count).toLocaleString("en-US");
}
