import { isModelMessage, isToolCall, isToolResult, type Message, type ToolCallMessage } from "./session.ts";

/**
 * One turn of a session, as index bounds into its messages (never a copy of them). Every session
 * splits into turns one way, read from either end, and the turns cover it whole, in order:
 * - `model`: a model turn: the model's messages (assistant text, thinking, tool calls) in
 *   `[start, results)`, then the tool results that follow them in `[results, end)`, whichever calls
 *   they answer and in any order. A model message right after a tool result starts the next turn.
 * - `user` / `system`: that one message at `start` (`results === end === start + 1`).
 * - `orphan-results`: tool results no model message comes before (at the start, or after a user
 *   or system message), as only a hand-edited or truncated session has them (`results === start`).
 */
export type SessionTurn = {
  type: "model" | "user" | "system" | "orphan-results";
  start: number;
  /** Where the turn's tool results begin; `end` when it has none. */
  results: number;
  end: number;
};

/** The session's turns, first to last (see `SessionTurn`). Reads each message once. */
export function* sessionTurns(messages: readonly Message[]): Generator<SessionTurn, void, undefined> {
  for (let turn = turnAt(messages, 0); turn !== undefined; turn = turnAt(messages, turn.end)) yield turn;
}

/**
 * The session's turns, last to first. Reads only the turns it yields: a walk that stops early
 * costs what it read, not the session's length.
 */
export function* sessionTurnsBackward(messages: readonly Message[]): Generator<SessionTurn, void, undefined> {
  for (let turn = turnBefore(messages, messages.length); turn !== undefined; turn = turnBefore(messages, turn.start))
    yield turn;
}

/**
 * The turn that starts at `start`, a turn boundary (0, or a turn's `end`); `undefined` at the
 * session's end.
 */
export function turnAt(messages: readonly Message[], start: number): SessionTurn | undefined {
  const first = messages[start];
  if (first === undefined) return undefined;
  if ("role" in first && first.role !== "assistant")
    return { type: first.role, start, results: start + 1, end: start + 1 };
  let results = start;
  while (results < messages.length && isModelMessage(messages[results]!)) results++;
  let end = results;
  while (end < messages.length && isToolResult(messages[end]!)) end++;
  return { type: results === start ? "orphan-results" : "model", start, results, end };
}

/**
 * The turn that ends at `end`, a turn boundary (the session's length, or a turn's `start`);
 * `undefined` at the session's start. Reads only that turn, so the last turn of a long session is
 * found in the time of the turn.
 */
export function turnBefore(messages: readonly Message[], end: number): SessionTurn | undefined {
  if (end <= 0) return undefined;
  const start = turnStartBefore(messages, end);
  const first = messages[start]!;
  if ("role" in first && first.role !== "assistant") return { type: first.role, start, results: end, end };
  let results = end;
  while (results > start && isToolResult(messages[results - 1]!)) results--;
  return { type: results === start ? "orphan-results" : "model", start, results, end };
}

/**
 * Where the turn that ends at `end` (> 0, a turn boundary) starts: `turnBefore` without building
 * the turn, for walks that run before every model call.
 */
export function turnStartBefore(messages: readonly Message[], end: number): number {
  const last = messages[end - 1]!;
  if ("role" in last && last.role !== "assistant") return end - 1;
  let start = end;
  while (start > 0 && isToolResult(messages[start - 1]!)) start--;
  while (start > 0 && isModelMessage(messages[start - 1]!)) start--;
  return start;
}

/**
 * The tool calls of `turn` that none of its results answers, in call order; none for a turn that
 * is not a model turn. Only the last turn's can still be answered: a later turn leaves them for good.
 */
export function unansweredCalls(messages: readonly Message[], turn: SessionTurn): ToolCallMessage[] {
  const calls: ToolCallMessage[] = [];
  if (turn.type !== "model") return calls;
  const answered = new Set<string>();
  for (let index = turn.results; index < turn.end; index++) {
    const result = messages[index]!;
    if (isToolResult(result)) answered.add(result.id);
  }
  for (let index = turn.start; index < turn.results; index++) {
    const message = messages[index]!;
    if (isToolCall(message) && !answered.has(message.id)) calls.push(message);
  }
  return calls;
}

/**
 * How a session rests: `paused` while a call waits for a human's approval; else from its last
 * message (system messages aside): none, `empty`; a user message, a tool call or a result,
 * `unfinished` (a model call or a tool's result was due); the model's last word (an answer, or
 * thinking alone) by its `stopReason`: `end_turn`, `stop_sequence`, `tool_use` (no call came of
 * it, so the loop ended there) or none at all (a scripted model's or a hand-written
 * `invokeModel`'s answer) `done`, `aborted`, `error`, anything else (`max_tokens`, `refusal`…)
 * `stopped`. The one rule the stores' `list()`, the viewer's session list, `sessionMetrics` and
 * the run registry decide by: those that read a log entry by entry keep the last message and the
 * waiting calls, and ask `restingOutcome`.
 */
export type SessionOutcome = "done" | "paused" | "aborted" | "error" | "stopped" | "unfinished" | "empty";

/** The outcome of a whole session (see `SessionOutcome`). */
export function sessionOutcome(messages: readonly Message[]): SessionOutcome {
  const answered = new Set<string>();
  let waiting = false;
  let last: unknown;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (last === undefined && !("role" in message && message.role === "system")) last = message;
    if (isToolResult(message)) answered.add(message.id);
    else if (isToolCall(message) && !answered.has(message.id) && message.approval?.status === "pending") waiting = true;
  }
  return restingOutcome(last, waiting);
}

/** The outcome of a session whose last message (system messages aside) is `last`, with calls `waiting` for approval or not. */
export function restingOutcome(last: unknown, waiting: boolean): SessionOutcome {
  if (waiting) return "paused";
  if (typeof last !== "object" || last === null) return "empty";
  const message = last as { role?: unknown; type?: unknown; stopReason?: unknown };
  if (message.role !== "assistant" && message.type !== "thinking") return "unfinished";
  switch (message.stopReason) {
    case undefined:
    case "end_turn":
    case "stop_sequence":
    case "tool_use":
      return "done";
    case "aborted":
      return "aborted";
    case "error":
      return "error";
    default:
      return "stopped";
  }
}
