import type { AgentEvent } from "../loop/events.ts";
import type { Message, ToolCallMessage } from "../session.ts";

/**
 * The events a live reader of a run got, told again from the run's recorded messages, for a
 * reader served from the log: for each model turn `turn-start`, each of its messages' streamed
 * preview whole (`thinking-delta`, `text-delta`, a call's `tool-call-start`, `tool-call-delta`
 * with its input's JSON, `tool-call-end`), the turn's `message` events, each result's
 * `tool-execution-start`, `tool-execution-end` and `message`, and `turn-end` once a later turn
 * began. What a page renders from them (text and reasoning parts, tool calls with their inputs,
 * results and approvals, the session's messages) is what it rendered from the live run; events
 * the log does not keep (cache, guardrail verdicts, retries, progress updates) are not told.
 *
 * Each event's id is its place: `log.<m>` for the run's m-th message (`log.0` for `run-start`),
 * `log.<m>.<k>` for the k-th event after it. Events after message m are told only once message
 * m + 1 is recorded (they depend on it), or once the run is over (`final`): so the same log
 * always gives the same ids, and a reader resuming after any of them gets the rest once.
 */
export function logEvents(messages: readonly Message[], final: FinalState | undefined): LoggedEvent[] {
  const out: LoggedEvent[] = [{ at: { messages: 0, step: 0 }, event: { type: "run-start" } }];
  let seen = 0;
  let step = 0;
  const push = (event: AgentEvent): void => void out.push({ at: { messages: seen, step: ++step }, event });
  const pushMessage = (message: Message): void => {
    seen++;
    step = 0;
    out.push({ at: { messages: seen, step: 0 }, event: { type: "message", message } });
  };
  const calls = new Map<string, ToolCallMessage>();
  let iteration = 0;
  let turnOpen = false;
  for (let index = 0; index < messages.length;) {
    const message = messages[index]!;
    if (!isModelMessage(message)) {
      if ("type" in message && message.type === "tool_result") {
        const call = calls.get(message.id);
        const name = call?.name ?? "";
        push({ type: "tool-execution-start", id: message.id, name, input: call?.input ?? {} });
        push({
          type: "tool-execution-end",
          id: message.id,
          name,
          result: message,
          durationMs: 0,
          waitMs: message.waitMs ?? 0,
        });
      }
      pushMessage(message);
      index++;
      continue;
    }
    let end = index;
    while (end < messages.length && isModelMessage(messages[end]!)) end++;
    const turn = messages.slice(index, end);
    if (turnOpen) push({ type: "turn-end", iteration });
    push({ type: "turn-start", iteration: ++iteration });
    for (const part of turn) for (const event of previewOf(part)) push(event);
    for (const part of turn) {
      if ("type" in part && part.type === "tool_call") calls.set(part.id, part);
      pushMessage(part);
    }
    turnOpen = true;
    index = end;
  }
  if (final === undefined) return out;
  for (const request of final.approvalRequests) push({ type: "tool-approval-request", ...request });
  if (turnOpen && final.runEnd.type === "run-end" && final.runEnd.outcome !== "paused")
    push({ type: "turn-end", iteration });
  out.push({ at: { messages: seen, step: ++step }, event: final.runEnd, end: true });
  return out;
}

/** What the log tells once the run is over: the calls that wait for a human, and how it ended. */
export type FinalState = {
  approvalRequests: { id: string; name: string; input: ToolCallMessage["input"] }[];
  runEnd: AgentEvent;
};

/** An event told from the log, at its place: after `messages` of the run's messages, the `step`-th event after the last of them. */
export type LoggedEvent = { at: LogPlace; event: AgentEvent; end?: true };

export type LogPlace = { messages: number; step: number };

/** The id of an event told from the log: `log.<messages>`, `log.<messages>.<step>`, `log.<messages>.end` for `run-end`. */
export function logEventId(logged: LoggedEvent): string {
  const { messages, step } = logged.at;
  if (logged.end === true) return `log.${messages}.end`;
  return step === 0 ? `log.${messages}` : `log.${messages}.${step}`;
}

/** Whether `place` comes after `after`. */
export function isAfter(place: LogPlace, after: LogPlace): boolean {
  return place.messages > after.messages || (place.messages === after.messages && place.step > after.step);
}

/**
 * What a live reader has of the turn in progress, past the `messages` it has: whether it got the
 * turn's `turn-start`, how many characters of reasoning and of text it was streamed, and how
 * many tool calls it saw start, and whether it got the `turn-end` of the turn before. A live event id carries it (see `liveEventId`), so a reader that
 * resumes from the log is told only the rest, not the turn's preview again.
 */
export type Preview = { turnEnded: boolean; turnStarted: boolean; thinking: number; text: number; calls: number };

export const noPreview: Preview = { turnEnded: false, turnStarted: false, thinking: 0, text: 0, calls: 0 };

/** The preview after `event`, given the one before (a `message` or a voided attempt starts over). */
export function nextPreview(preview: Preview, event: AgentEvent): Preview {
  switch (event.type) {
    case "message":
      return noPreview;
    case "turn-end":
      return { ...preview, turnEnded: true };
    case "turn-start":
      return { ...preview, turnStarted: true };
    case "thinking-delta":
      return { ...preview, thinking: preview.thinking + event.delta.length };
    case "text-delta":
      return { ...preview, text: preview.text + event.delta.length };
    case "tool-call-start":
      return { ...preview, calls: preview.calls + 1 };
    // The attempt's deltas are void: a display drops them, and the next attempt streams anew.
    case "retry":
    case "fallback":
      return { ...preview, thinking: 0, text: 0, calls: 0 };
    case "text-retract":
      return { ...preview, text: 0 };
    default:
      return preview;
  }
}

/**
 * A live event's id: `<seq>.<messages>`, with `.<turns>.<thinking>.<text>.<calls>` once events
 * past the last message came (`turns`: 1 for the turn's `turn-start`, plus 2 for the previous
 * turn's `turn-end`).
 */
export function liveEventId(seq: number, messages: number, preview: Preview): string {
  const { turnEnded, turnStarted, thinking, text, calls } = preview;
  if (!turnEnded && !turnStarted && thinking === 0 && text === 0 && calls === 0) return `${seq}.${messages}`;
  return `${seq}.${messages}.${(turnStarted ? 1 : 0) + (turnEnded ? 2 : 0)}.${thinking}.${text}.${calls}`;
}

/**
 * Where a reader resumes a run read from the log, from the id it last got: `log.<m>`,
 * `log.<m>.<k>` (exact places; `log.<m>.end`: after the end), or a live id `<seq>.<m>` / `<seq>.<m>.<s>.<r>.<t>.<c>` (after
 * message m, with that much of the turn's preview already shown). `undefined` for another id.
 */
export function resumePlace(id: string): { after: LogPlace; preview: Preview } | undefined {
  const logged = /^log\.(\d{1,15})(?:\.(\d{1,15}|end))?$/.exec(id);
  if (logged !== null) {
    const step = logged[2] === "end" ? Number.MAX_SAFE_INTEGER : Number(logged[2] ?? 0);
    return { after: { messages: Number(logged[1]), step }, preview: noPreview };
  }
  const live = /^\d{1,15}\.(\d{1,15})(?:\.([0-3])\.(\d{1,15})\.(\d{1,15})\.(\d{1,15}))?$/.exec(id);
  if (live === null) return undefined;
  const preview =
    live[2] === undefined
      ? noPreview
      : {
          turnEnded: Number(live[2]) >= 2,
          turnStarted: Number(live[2]) % 2 === 1,
          thinking: Number(live[3]),
          text: Number(live[4]),
          calls: Number(live[5]),
        };
  return { after: { messages: Number(live[1]), step: 0 }, preview };
}

/**
 * The events after message `messages` of the log, less what the reader was already shown of the
 * turn in progress (`preview`): its `turn-start`, the first characters of its reasoning and
 * text, the calls it saw start (their input comes whole with their `message`).
 */
export function withoutPreview(events: LoggedEvent[], preview: Preview): LoggedEvent[] {
  if (preview === noPreview) return events;
  let { thinking, text, calls } = preview;
  let { turnStarted, turnEnded } = preview;
  const skippedCalls = new Set<string>();
  const kept: LoggedEvent[] = [];
  for (const logged of events) {
    const { event } = logged;
    if (event.type === "message" || logged.end === true) {
      kept.push(logged);
      // Only the turn in progress was previewed: what follows its first message is told whole.
      if (event.type === "message") ({ thinking, text, calls, turnStarted, turnEnded } = { ...noPreview });
      continue;
    }
    if (event.type === "turn-end" && turnEnded) {
      turnEnded = false;
      continue;
    }
    if (event.type === "turn-start" && turnStarted) {
      turnStarted = false;
      continue;
    }
    if (event.type === "thinking-delta" || event.type === "text-delta") {
      const shown = event.type === "thinking-delta" ? thinking : text;
      const rest = event.delta.slice(shown);
      if (event.type === "thinking-delta") thinking = Math.max(0, thinking - event.delta.length);
      else text = Math.max(0, text - event.delta.length);
      if (rest !== "") kept.push({ ...logged, event: { ...event, delta: rest } });
      continue;
    }
    if (event.type === "tool-call-start" && calls > 0) {
      calls--;
      skippedCalls.add(event.id);
      continue;
    }
    if ((event.type === "tool-call-delta" || event.type === "tool-call-end") && skippedCalls.has(event.id)) continue;
    kept.push(logged);
  }
  return kept;
}

function isModelMessage(message: Message): boolean {
  if ("role" in message) return message.role === "assistant";
  return message.type === "thinking" || message.type === "tool_call";
}

// What a live reader was streamed before the message entered the session.
function previewOf(message: Message): AgentEvent[] {
  if ("role" in message)
    return message.role === "assistant" && message.content !== "" ? [textDelta(message.content)] : [];
  if (message.type === "thinking")
    return message.redacted === true || message.content === ""
      ? []
      : [{ type: "thinking-delta", delta: message.content }];
  if (message.type !== "tool_call") return [];
  return [
    { type: "tool-call-start", id: message.id, name: message.name },
    { type: "tool-call-delta", id: message.id, delta: JSON.stringify(message.input) },
    { type: "tool-call-end", id: message.id, name: message.name, input: message.input },
  ];
}

function textDelta(delta: string): AgentEvent {
  return { type: "text-delta", delta };
}

/**
 * The key a live event is matched by against what a reader was told from the log: its type, and
 * for a call's events the call's id.
 */
export function eventKey(event: AgentEvent): string {
  return "id" in event && typeof event.id === "string" ? `${event.type}:${event.id}` : event.type;
}

/**
 * What a reader resuming in a registry that holds the run after `log.<m>.<k>` was told already of
 * the events between message m and the next: the keys (`eventKey`) of the first k events the log
 * tells there, from the run's messages. Its deltas are whole, so a kind told at all was told
 * entirely: the live events with those keys, up to the next message, are not sent again.
 */
export function toldFromLog(
  messages: readonly Message[],
  place: LogPlace,
  approvalRequests: FinalState["approvalRequests"],
): Set<string> {
  // Past the last message, the log tells the calls that wait (then the end).
  const final: FinalState | undefined =
    place.messages < messages.length
      ? undefined
      : { approvalRequests, runEnd: { type: "run-end", outcome: approvalRequests.length > 0 ? "paused" : "done" } };
  return new Set(
    logEvents(messages, final)
      .filter(({ at, end }) => end !== true && at.messages === place.messages && at.step >= 1 && at.step <= place.step)
      .map(({ event }) => eventKey(event)),
  );
}
