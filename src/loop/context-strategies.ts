import { describeContent } from "../content-parts.ts";
import { describeError, isMaxIterationsError } from "../errors.ts";
import { agentLoop } from "./loop.ts";
import type { AgentLoopOptions } from "./loop-options.ts";
import { checkNumber } from "../numeric-options.ts";
import type { InvokeModel } from "../model/invoke-model.ts";
import {
  initSession,
  response,
  spliceSession,
  type JsonObject,
  type Message,
  type Session,
  type Usage,
} from "../session.ts";
import type { CompactionStrategy } from "./compaction-strategy.ts";
import { sessionTurnsBackward } from "../session-turns.ts";
import { messageCharacters } from "./content-size.ts";

/** Keeps the system messages, the first user message and the last `keepTurns` turns; drops the rest. */
export function slidingWindow(options: { keepTurns: number }): CompactionStrategy {
  checkNumber("slidingWindow: keepTurns", options.keepTurns, { min: 1, integer: true });
  return (session) => {
    const span = olderTurns(session.messages, options.keepTurns);
    if (span !== undefined)
      spliceSession(session, span.start, span.end - span.start, [], {
        strategy: "sliding-window",
        dropped: span.end - span.start,
      });
  };
}

export type SummarizeOptions = {
  /** The model that writes the summary (often a cheaper one). */
  invokeModel: InvokeModel;
  /** The model's context window, in tokens (> 0). */
  contextWindow: number;
  /** Compact once the next request is estimated above this share of the window (> 0, default 0.8). */
  threshold?: number;
  /** The recent turns kept whole: an integer >= 1 (default 2). */
  keepTurns?: number;
  /** The summarizer's system prompt. */
  prompt?: string;
};

/**
 * Token-aware compaction: estimates the next request's tokens (the last turn's reported usage,
 * plus about a token per 4 characters added since) and, past `threshold` of the window (or at
 * once after an overflow), replaces the older turns with a summary written by a subagent. Cuts
 * only at turn boundaries and keeps the recent turns whole. The `splice` it makes records the
 * summary, tokens before and after, and the first kept message.
 *
 * A summarizer that misbehaves never ends the run nor makes the session longer: one that fails,
 * calls tools, answers nothing, or answers more than the turns it would replace is not used. After
 * an overflow the older turns are then dropped without a summary (as `slidingWindow` does), before
 * a call they are kept; either way the strategy says so (`context.report`, a `compaction-fallback`
 * event of the run).
 */
export function summarizeOlderTurns(options: SummarizeOptions): CompactionStrategy {
  checkNumber("summarizeOlderTurns: contextWindow", options.contextWindow, { min: 0, exclusive: true });
  checkNumber("summarizeOlderTurns: threshold", options.threshold, { min: 0, exclusive: true });
  checkNumber("summarizeOlderTurns: keepTurns", options.keepTurns, { min: 1, integer: true });
  const threshold = options.threshold ?? 0.8;
  const prompt = options.prompt ?? defaultSummaryPrompt;
  // Usage reported before a compaction measured the longer prompt: ignore it until a new turn reports.
  const freshFrom = new WeakMap<Session, number>();
  return async (session, context) => {
    const before = estimateTokens(session.messages, freshFrom.get(session));
    if (context.reason === "before-call" && before < threshold * options.contextWindow) return;
    const span = olderTurns(session.messages, options.keepTurns ?? 2);
    if (span === undefined) return;
    const older = session.messages.slice(span.start, span.end);
    // The summarizer's call is the run's: it counts against the run's budget as it ends, and does
    // not start once that is used up.
    const written = await summarize(options.invokeModel, prompt, older.map(describe).join("\n"), {
      signal: context.signal,
      ...(context.budget === undefined ? {} : { parentBudget: context.budget }),
    });
    // Aborted: the run ends; nothing to compact for it.
    if (context.signal.aborted) return;
    const inserted: Message[] =
      written.summary === undefined
        ? []
        : [
            {
              role: "user",
              content: `Summary of the earlier conversation:\n${written.summary}`,
              compactionSummary: true,
            },
          ];
    const removedTokens = characterTokens(older);
    let problem = written.problem;
    if (problem === undefined && characterTokens(inserted) >= removedTokens)
      problem = "the summary is longer than the turns it would replace";
    if (problem !== undefined) {
      const fallback = context.reason === "overflow" ? "sliding-window" : "none";
      context.report?.({ strategy: "summary", reason: problem, fallback });
      if (fallback === "none") return;
      inserted.length = 0;
    }
    const firstKept = session.messages[span.end];
    spliceSession(session, span.start, span.end - span.start, inserted, {
      ...(problem === undefined
        ? { strategy: "summary", summary: written.summary ?? "" }
        : { strategy: "sliding-window", dropped: span.end - span.start, fallbackFrom: "summary", reason: problem }),
      tokensBefore: before,
      // The same estimate, less what left, plus the summary.
      tokensAfter: before - removedTokens + characterTokens(inserted),
      ...(firstKept === undefined ? {} : { firstKept: firstKept as unknown as JsonObject }),
    });
    freshFrom.set(session, session.messages.length);
  };
}

/**
 * A summary of `messages` written by `invokeModel` (one call, no tools), as `summarizeOlderTurns`
 * writes one: `{ summary }`, or `{ problem }` saying why there is none (the model failed, called
 * tools, or answered nothing). Never throws. `run`: options of the summarizer's one-call run
 * (`signal`; `onEvent` hears its events, its model call's usage included; `budget`/`prices`/`parentBudget` bound it).
 */
export async function summarizeMessages(
  invokeModel: InvokeModel,
  messages: readonly Message[],
  run: SummarizerRun,
  prompt: string = defaultSummaryPrompt,
): Promise<{ summary?: string; problem?: string }> {
  return summarize(invokeModel, prompt, messages.map(describe).join("\n"), run);
}

/** What the summarizer's run takes from the run it writes for. */
export type SummarizerRun = Pick<AgentLoopOptions, "onEvent" | "budget" | "prices" | "parentBudget"> & {
  signal: AbortSignal;
};

const defaultSummaryPrompt =
  "Summarize this conversation between a user and an AI agent for the agent itself: the task, what was done, what was found (keep names, paths, numbers, decisions), and what is left. Output only the summary.";

// The summarizer is a model like any other: it may fail, call tools it does not have, or say nothing.
async function summarize(
  invokeModel: InvokeModel,
  prompt: string,
  transcript: string,
  options: SummarizerRun,
): Promise<{ summary?: string; problem?: string }> {
  try {
    const run = await agentLoop(invokeModel, [], initSession(prompt, transcript), {
      ...options,
      name: "summarizer",
      maxIterations: 1,
      compaction: false,
    });
    if (run.messages.some((message) => "type" in message && message.type === "tool_call"))
      return { problem: "the summarizer called tools" };
    const summary = response(run)?.content ?? "";
    return summary.trim() === "" ? { problem: "the summarizer answered nothing" } : { summary };
  } catch (error) {
    // Its one call was spent on tool calls: the loop wanted a second to answer them.
    if (isMaxIterationsError(error)) return { problem: "the summarizer called tools" };
    return { problem: `the summarizer failed: ${describeError(error)}` };
  }
}

/**
 * The next request's size in tokens, estimated: the input and output of the last model turn that
 * reported usage (at `usageFrom` or later), plus a token per 4 characters of what came after it.
 */
export function estimateTokens(messages: readonly Message[], usageFrom = 0): number {
  let characters = 0;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    const usage: Usage | undefined = "usage" in message && index >= usageFrom ? message.usage : undefined;
    if (usage !== undefined) return usage.inputTokens + usage.outputTokens + Math.ceil(characters / 4);
    characters += messageCharacters(message);
  }
  return Math.ceil(characters / 4);
}

function characterTokens(messages: readonly Message[]): number {
  let characters = 0;
  for (const message of messages) characters += messageCharacters(message);
  return Math.ceil(characters / 4);
}

// The messages between the first user message and the last `keepTurns` turns (user messages and
// model turns count; system messages and stray results do not): [start, end), cut at turn
// boundaries so every tool call stays with its result. Undefined when there is nothing older to remove.
function olderTurns(messages: readonly Message[], keepTurns: number): { start: number; end: number } | undefined {
  const firstUser = messages.findIndex((message) => "role" in message && message.role === "user");
  if (firstUser === -1) return undefined;
  const start = firstUser + 1;
  let turns = 0;
  for (const turn of sessionTurnsBackward(messages)) {
    if (turn.start <= start) return undefined;
    if ((turn.type === "user" || turn.type === "model") && ++turns === keepTurns) return { start, end: turn.start };
  }
  return undefined;
}

function describe(message: Message): string {
  if ("role" in message) return `${message.role}: ${describeContent(message.content)}`;
  if (message.type === "thinking") return `(thinking) ${message.content}`;
  if (message.type === "tool_call") return `tool call ${message.name} ${JSON.stringify(message.input)}`;
  return `tool result${message.isError === true ? " (error)" : ""}: ${typeof message.output === "string" ? message.output : JSON.stringify(message.output)}`;
}
