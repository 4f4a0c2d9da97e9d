import { contentProblem, type ContentPart } from "./content-parts.ts";

/**
 * The session: an ordered list of generic, provider-neutral messages. It is plain JSON
 * and must survive `JSON.parse(JSON.stringify(session))` unchanged. Provider formats exist only
 * inside an `invokeModel` adapter.
 */
export type Session = { messages: Message[] };

export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;
export type JsonObject = { [key: string]: JsonValue };

/**
 * Why a model turn ended, normalized across providers. The loop acts on it:
 * `tool_use` (or no stop reason with tool calls) runs the tools; any other reason ends the run,
 * and tool calls of such a turn are answered with error results instead of being executed.
 */
export type StopReason =
  | "end_turn"
  | "tool_use"
  | "max_tokens"
  | "stop_sequence"
  | "pause_turn"
  | "refusal"
  | "content_filter"
  | "aborted"
  | "error"
  | "other";

/**
 * Token counts of one model call. `inputTokens` is the whole prompt, cached parts included
 * (`cacheReadTokens`/`cacheWriteTokens` are subsets of it); `outputTokens` includes reasoning
 * (`reasoningTokens` is a subset), whatever each provider's own convention.
 */
export type Usage = {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
};

/** Set on the last message of a model turn (by `invokeModel`, or by the loop on abort). */
export type TurnEndFields = {
  stopReason?: StopReason;
  /**
   * The provider's own stop reason, whenever `stopReason` alone does not tell what it was: a value
   * the adapter does not know (`other`), one of several values with the same normalized reason
   * (Gemini's `SAFETY`), or one the adapter corrected (`stop` with tool calls is `tool_use`).
   * Absent when it is the provider's plain name for `stopReason` (`stop`, `end_turn`, `STOP`, `length`).
   */
  rawStopReason?: string;
  /** Why the provider stopped, in its words, where it says (an Anthropic refusal's category and explanation). */
  stopDetails?: StopDetails;
  usage?: Usage;
  /** The model that answered, as the provider named it in its response (else the one asked for). */
  model?: string;
  /** The provider's id of the response, where it gives one (for its support and for traces). */
  responseId?: string;
  /**
   * Set by the loop on the last message of the turn that took the run over its `budget`: the
   * budget and what the run had spent then. A later run on the session with a budget this spending
   * already exceeds refuses before calling the model (`BudgetExceededError`).
   */
  budgetExceeded?: BudgetOverrun;
};

/** A run's `budget` and what it had spent once it went over it (tokens: input + output; usd with prices). */
export type BudgetOverrun = { budget: { usd?: number; tokens?: number }; spent: { usd?: number; tokens: number } };

/** A provider's own account of a stop (Anthropic `stop_details`); every field is optional. */
export type StopDetails = {
  /** The kind of details, e.g. `refusal`. */
  type?: string;
  /** The policy category that triggered a refusal, e.g. `cyber`. */
  category?: string;
  /** A human-readable explanation. */
  explanation?: string;
};

/**
 * `ts`: ISO-8601 UTC time the message entered the session; set by the library when missing.
 * `agent`: the agent whose model produced the message, in a run of `runAgent` (metadata, never sent).
 */
type Timestamped = { ts?: string; agent?: string };

/**
 * What a guardrail answered about a text: let it through, block it (`message` says why), put
 * `replacement` in its place, or send `feedback` to the model and let it try again.
 */
export type GuardrailVerdict =
  | { action: "allow" }
  | { action: "block"; message: string }
  | { action: "redact"; replacement: string }
  | { action: "retry"; feedback: string };

/**
 * Set by the loop (never by a model) on a message a guardrail changed: a blocked message's marker
 * (`[blocked by <name>]`), a redacted text, the feedback of a retry. `name` is the guardrail's.
 */
export type GuardrailMark = { guardrail?: GuardrailVerdict & { name: string } };

export type SystemMessage = { role: "system"; content: string } & Timestamped;
/**
 * User input: text, or content parts (text, images, files; see `ContentPart`).
 * `compactionSummary: true`: a compaction wrote this message (`summarizeOlderTurns`' summary of
 * the turns it replaced): it is sent as user text, but it is no input of the user's, so it is no
 * user turn for a list of them (the CLI's `/rewind`). Metadata, never sent as such.
 */
export type UserMessage = {
  role: "user";
  content: string | ContentPart[];
  compactionSummary?: true;
  /**
   * The id of the background task whose outcome this message gives the model (the loop wrote it at
   * a safe point). A session holds at most one message with a given task's id. Metadata, never sent.
   */
  deliversTask?: string;
} & Timestamped &
  GuardrailMark;
/**
 * Model text. `output` holds the validated final answer of a run made with an `output` schema.
 * `signature`/`provider`: opaque provider data to send back with this text (Gemini's
 * `thoughtSignature` on a text part), valid only for that provider.
 */
export type AssistantMessage = {
  role: "assistant";
  content: string;
  output?: JsonValue;
  signature?: string;
  provider?: string;
  /**
   * No model wrote this answer: it is the result of the tool call with this id, given verbatim as
   * the run's answer (a tool with `answer: "verbatim"`, such as `subagentTool(agent, { answer: "verbatim" })`).
   * Metadata, never sent; `sessionMetrics` counts no model call for it.
   */
  answerFrom?: string;
} & Timestamped &
  GuardrailMark &
  TurnEndFields;

/**
 * Model reasoning. `signature` is the provider's proof of integrity and must be sent back
 * byte-identical, or not at all. `compacted: true` means `content` was truncated, so the
 * block can no longer be sent back as reasoning (the signature would not match).
 */
export type ThinkingMessage = {
  type: "thinking";
  content: string;
  signature?: string;
  /** The adapter that produced `signature` (e.g. `"anthropic"`); other providers must not be sent it. */
  provider?: string;
  /** The provider hid the reasoning; `signature` carries its opaque data and `content` is empty. */
  redacted?: true;
  compacted?: true;
} & Timestamped &
  TurnEndFields;

/** A tool call the model asked for. `id` is unique within the session. `compacted: true` means `input` was truncated. */
export type ToolCallMessage = {
  type: "tool_call";
  id: string;
  name: string;
  input: JsonObject;
  compacted?: true;
  /**
   * Set when the call needs a human's decision: `pending` while the run is paused for it, then
   * `approved` or `denied` (by `resolveApproval`) until the call has its result.
   */
  approval?: {
    status: "pending" | "approved" | "denied";
    reason?: string;
    /** The session of a subagent that paused inside this call (its own calls wait); resumed through this one. */
    nested?: Session;
    /**
     * A copy of the input the decision was taken for (set by `resolveApproval`): the decision holds
     * only while the call's input is still this; a changed input (or a decision without it) asks again.
     */
    input?: JsonObject;
    /** Who decided (absent while `pending`): a rule, a classifier, a human, the `beforeToolCall` hook, or the policy itself. */
    decidedBy?: DecidedBy;
    /** The links of the approval chain asked before the one that decided, that were not sure (a rule's `ask`, a classifier's `unsure`). */
    consulted?: ConsultedLink[];
    /** ISO-8601 UTC time of the decision. */
    at?: string;
  };
  /**
   * A result this call got while an earlier call of the same turn waits for approval. It enters
   * the session, in call order, once that call is answered; the call never runs again.
   */
  heldResult?: {
    output: JsonValue;
    content?: ContentPart[];
    isError?: boolean;
    task?: TaskRecord;
    /** The `toolOutput` guardrail's verdict, taken before the result was held (`output` is then what it left). */
    guardrail?: GuardrailVerdict & { name: string };
    /** What the result carries beside its output, kept through the hold: see `ToolResultMessage`. */
    subagentUsage?: SubagentUsage[];
    programCalls?: ProgramCall[];
    logs?: string[];
  };
  /** Opaque data of the `provider` that made this call, sent back with it only to that provider (Gemini's `thoughtSignature`). */
  signature?: string;
  provider?: string;
  /** The id was made up by the adapter (the provider gave none) and is never sent to the provider. */
  generatedId?: true;
  /**
   * The id the `provider` gave the call, when `id` had to differ from it: the provider reused an id
   * the session already had (OpenAI-compatible servers number calls per response). Sent back, for
   * this call and its result, only to that provider; every other one gets `id`.
   */
  wireId?: string;
  /**
   * Set when the adapter refused the input the provider sent (nested too deep, too large): `input`
   * is `{}`, and the call is answered with this as an invalid-input error, never run.
   */
  inputError?: string;
} & Timestamped &
  TurnEndFields;

/**
 * Who decided a tool call (`approval.decidedBy`): a rule of the run's `approvalPolicy` (its id and
 * action), a classifier (its verdict, and what asking it cost), a human (`user`: the id the
 * application recorded), the `beforeToolCall` hook (a denial), or the policy itself (no one to ask).
 */
export type DecidedBy =
  | { by: "rule"; rule: string; action: "allow" | "deny" | "ask"; reason?: string }
  | ClassifierDecision
  | { by: "human"; user?: string; reason?: string }
  | { by: "hook"; reason?: string }
  | { by: "policy"; reason: string };

/**
 * A classifier's verdict as recorded. `error`: why its answer was taken as `unsure` (it threw, timed
 * out or answered something else); `usage`, `model`, `costUsd` (with the run's `prices`): what it spent.
 */
export type ClassifierDecision = {
  by: "classifier";
  name: string;
  decision: "allow" | "deny" | "unsure";
  reason: string;
  confidence?: number;
  model?: string;
  usage?: Usage;
  costUsd?: number;
  error?: string;
};

/** A link of the approval chain that was asked and was not sure: a rule that said `ask`, a classifier that said `unsure`. */
export type ConsultedLink = Extract<DecidedBy, { by: "rule" } | { by: "classifier" }>;

/**
 * The answer to the `tool_call` with the same `id`. Every tool call gets exactly one. With
 * `content` (a handler returned `toolContent(parts)`), the parts are what the model is shown and
 * `output` holds their text parts joined, for readers that know only `output`.
 */
export type ToolResultMessage = {
  type: "tool_result";
  id: string;
  output: JsonValue;
  content?: ContentPart[];
  isError?: boolean;
  /**
   * Metadata, never sent to a model: whole milliseconds the call waited in the `beforeToolCall`
   * hook (for the user's permission, say) before it ran; set only when at least 1 ms.
   */
  waitMs?: number;
  /**
   * The whole output is kept aside and `output` stands in for it: `cleared` (a one-line
   * placeholder, by `clearToolResults`) or `offloaded` (its head and tail around a marker, by the
   * `largeOutput` option). The `recall_output` tool reads the original back (`keptOutput`).
   */
  kept?: "cleared" | "offloaded";
  /**
   * Metadata, never sent to a model: the model calls made for this call (a subagent's, at any
   * depth, reported through `ToolContext.spend`), by the model that answered. They counted against
   * the run's `budget`; `sessionMetrics` counts them under `subagents` and in `costUsd`/`costByModel`.
   */
  subagentUsage?: SubagentUsage[];
  /**
   * Metadata, never sent to a model: the call became a background task (its `output` says it runs).
   * Updated in place (a session change `{ type: "update", reason: "task" }`) when the task settles.
   */
  task?: TaskRecord;
  /** Metadata, never sent: this result gives the model the outcome of the background task with this id (`wait_task`). */
  deliversTask?: string;
  /**
   * Metadata, never sent to a model (`contextUsage` and compaction ignore it): the tool calls the
   * program of a code-mode call (`run_code`) started, in start order, each with what it gave the program.
   */
  programCalls?: ProgramCall[];
  /** Metadata, never sent to a model: the `console.*` lines of a code-mode call's program. */
  logs?: string[];
} & Timestamped &
  GuardrailMark;

/**
 * Where a background task stands: `running` while its handler runs; `completed` (a value),
 * `failed` (a throw or its timeout), `cancelled` (`cancelTask`, an abort of the run) or `lost`
 * (the process running it stopped and its `onRestart` is `"lost"`: the outcome is unknown).
 */
export type TaskStatus = "running" | "completed" | "failed" | "cancelled" | "lost";

/**
 * A background task as its call's result records it (`ToolResultMessage.task`). `id` is unique
 * across sessions; `attempt` counts the handler's starts (2 after one rerun); `output` and
 * `isError` are the handler's outcome once settled; `reason` says why it was cancelled or lost.
 */
export type TaskRecord = {
  id: string;
  status: TaskStatus;
  onRestart: "rerun" | "lost";
  attempt: number;
  startedAt: string;
  settledAt?: string;
  output?: JsonValue;
  /** The handler's content parts (`toolContent`), delivered with the outcome. */
  content?: ContentPart[];
  isError?: boolean;
  reason?: string;
};

/**
 * One tool call a code-mode program started: its id (`<code call id>.<n>`, n from 1 in start
 * order), the tool and its input, and the result the program got (`content` when it had parts).
 */
export type ProgramCall = {
  id: string;
  name: string;
  input: JsonObject;
  output: JsonValue;
  isError?: boolean;
  content?: ContentPart[];
};

/** Model calls made for a tool call: how many, by which model (as recorded on their turns), their usage summed. */
export type SubagentUsage = { model?: string; calls: number; usage: Usage };

export type Message =
  SystemMessage | UserMessage | AssistantMessage | ThinkingMessage | ToolCallMessage | ToolResultMessage;

/** The messages a model turn may produce. */
export type ModelMessage = AssistantMessage | ThinkingMessage | ToolCallMessage;

/** Creates a session with a system prompt and the user's first message (text, or content parts). */
export function initSession(systemPrompt: string, userPrompt: string | ContentPart[]): Session {
  const session: Session = { messages: [] };
  extendSession(session, { role: "system", content: systemPrompt });
  extendSession(session, { role: "user", content: userPrompt });
  return session;
}

/**
 * Appends a message to the session in place and returns the session. Every message that enters a
 * session goes through here, so a listener bound with `onSessionExtend` (persistence) sees each one.
 * A message without `ts` is stored as a copy with `ts` set; the caller's object is not modified.
 * Throws a `TypeError` naming the part when a message's content parts are malformed.
 */
export function extendSession(session: Session, message: Message): Session {
  checkContent(message);
  // Looked up once: a session nobody listens to is the usual one.
  const listened = changeListeners.has(session);
  if (listened) checkDepth(message);
  const stored = message.ts === undefined ? { ...message, ts: now() } : message;
  session.messages.push(stored);
  // This is where a store hears the session grow: the listener a store's `bindSession`
  // (store/binding.ts) registered turns the change into a log entry, synchronously, here.
  if (listened) notifySessionChange(session, { type: "append", index: session.messages.length - 1, message: stored });
  return session;
}

/**
 * Appends several messages at once (a model turn), as `extendSession` does each, and returns the
 * stored copies. Listeners see one `append` per message, all but the last marked `more`, so a
 * store can write the turn in one piece: a crash never leaves half of a turn in the log.
 */
export function extendSessionBatch(session: Session, messages: readonly Message[]): Message[] {
  for (const message of messages) checkContent(message);
  const listened = changeListeners.has(session);
  if (listened) for (const message of messages) checkDepth(message);
  const stored = messages.map((message) => (message.ts === undefined ? { ...message, ts: now() } : message));
  appendTurn(session, stored, listened);
  return stored;
}

/**
 * Appends messages the caller made for the session and gives up (the loop's copies of a model's
 * turn), as `extendSessionBatch` does: a message without `ts` gets it in place, no copy is made.
 * Throws a `TypeError`, before anything is added, when a message's content parts are malformed.
 */
export function extendSessionWith(session: Session, messages: readonly Message[]): void {
  for (const message of messages) checkContent(message);
  const listened = changeListeners.has(session);
  if (listened) for (const message of messages) checkDepth(message);
  for (const message of messages) message.ts ??= now();
  appendTurn(session, messages, listened);
}

// The stored messages of one turn in the session; listeners hear one `append` each, all but the last `more`.
function appendTurn(session: Session, stored: readonly Message[], listened: boolean): void {
  const first = session.messages.length;
  for (const message of stored) session.messages.push(message);
  if (!listened) return;
  stored.forEach((message, offset) => {
    const change: SessionChange = { type: "append", index: first + offset, message };
    if (offset < stored.length - 1) change.more = true;
    notifySessionChange(session, change);
  });
}

/** Adds a user message (a follow-up question: text, or content parts) to the session and returns the session. */
export function send(session: Session, content: string | ContentPart[]): Session {
  return extendSession(session, { role: "user", content });
}

/**
 * What is wrong with the content parts of `message` (a user message's `content`, a tool result's
 * `content`), or undefined: the one check for parts entering a session, from code or from a file.
 */
export function messageContentProblem(message: Message): string | undefined {
  if ("role" in message) {
    if (message.role !== "user" || typeof message.content === "string") return undefined;
    return contentProblem(message.content, "user message content");
  }
  if (message.type !== "tool_result" || message.content === undefined) return undefined;
  const problem = contentProblem(message.content, `tool result ${JSON.stringify(message.id)} content`);
  if (problem !== undefined) return problem;
  return Array.isArray(message.content) ? undefined : "tool result content must be an array of content parts";
}

function checkContent(message: Message): void {
  // Plain text, the common case, costs one type check.
  if ("role" in message ? typeof message.content === "string" : message.type !== "tool_result") return;
  const problem = messageContentProblem(message);
  if (problem !== undefined) throw new TypeError(problem);
}

// A listener (a store's binding) writes each message as it enters: one nested past what a log may
// hold would fail there as a bare RangeError after it entered, and every later change with it. It
// is refused here instead, before the session changes. Only when someone listens: a session in
// memory alone holds whatever its owner puts in it.
function checkDepth(message: Message): void {
  if (!valueNestedDeeperThan(message, maxMessageDepth)) return;
  const which =
    "role" in message
      ? `a ${message.role} message`
      : "id" in message
        ? `${message.type} ${JSON.stringify(message.id)}`
        : "a thinking message";
  throw new TypeError(
    `${which} nests more than ${maxMessageDepth} levels deep: a stored session is JSON a log can write and load back`,
  );
}

/**
 * A deep copy for branching: the fork shares nothing with the original and is not bound to any
 * listener. The outputs kept aside for `recall_output` are kept for the fork too.
 */
export function forkSession(session: Session): Session {
  const fork = structuredClone(session);
  const kept = keptOutputs.get(session);
  if (kept !== undefined) keptOutputs.set(fork, new Map(kept));
  return fork;
}

/** The last assistant text message, or `undefined` if the model has not answered yet. */
export function response(session: Session): AssistantMessage | undefined {
  for (let index = session.messages.length - 1; index >= 0; index--) {
    const message = session.messages[index];
    if (message !== undefined && "role" in message && message.role === "assistant") return message;
  }
  return undefined;
}

/** The current time as ISO-8601 UTC, the format of `ts`. */
export function now(): string {
  // Formatting a Date costs more than the rest of adding a message; messages arriving within
  // the same millisecond share the string.
  const time = Date.now();
  if (time !== lastTime) {
    lastTime = time;
    lastIso = new Date(time).toISOString();
  }
  return lastIso;
}

let lastTime = Number.NaN;
let lastIso = "";

export type SessionListener = (message: Message, session: Session) => void;

/**
 * A change to a session, as listeners see it. Sessions grow by `append`; the library changes a
 * stored message only by `replace` (compaction puts a shortened copy in its place) or `update`
 * (fields set on it in place: approval marks and decisions), and removes messages only by
 * `splice` (a compaction strategy summarizing or dropping older turns, or a rewind).
 */
export type SessionChange =
  /**
   * `more: true`: further messages of the same batch (one model turn) are appended right after,
   * synchronously, the last of them without `more`; persistence may record the batch whole.
   */
  | { type: "append"; index: number; message: Message; more?: true }
  /** `details` says what made the replacement, for the record (`{ strategy: "clear-tool-results" }`). */
  /**
   * `reason: "guardrail"`: a guardrail blocked or redacted the message; `previous` (the original)
   * then stays only in the log's entry for this change: the audit trail.
   */
  | {
      type: "replace";
      index: number;
      message: Message;
      previous: Message;
      reason: "compaction" | "guardrail";
      details?: JsonObject;
    }
  /**
   * `reason: "guardrail"`: a `toolInput` guardrail redacted the call's input before it ran;
   * `reason: "task"`: a background task's record (`ToolResultMessage.task`) changed (it settled, was rerun).
   */
  | { type: "update"; index: number; message: Message; reason: "approval" | "guardrail" | "task" }
  /**
   * A guardrail answered (`allow`, `block`, `redact`, `retry`): a store records it as a `guardrail`
   * entry; the session does not change. `original`: a blocked text that never entered the session
   * (an answer, a steering message), kept for the audit trail only here.
   */
  | { type: "guardrail"; verdict: GuardrailRecord }
  /**
   * The whole output of tool call `id` was kept aside (`keepOutput`): the session holds a shortened
   * version of it (`kept: "offloaded"`). Persistence records it before the shortened result.
   */
  | { type: "keep"; id: string; output: JsonValue }
  /**
   * `removed` messages at `index` were replaced by `inserted` (a summary, or nothing: a sliding
   * window), or, with `reason: "rewind"`, the conversation went back to before a user message
   * (`removed` is everything from it on). `details` says why, for the record (a summary's tokens
   * before and after…).
   */
  | {
      type: "splice";
      index: number;
      removed: Message[];
      inserted: Message[];
      reason: "compaction" | "rewind";
      details?: JsonObject;
    };

/** One guardrail's answer, as the log records it. */
export type GuardrailRecord = {
  name: string;
  kind: "input" | "output" | "toolInput" | "toolOutput";
  action: GuardrailVerdict["action"];
  message?: string;
  agent?: string;
  /** The tool call checked (`toolInput`, `toolOutput`). */
  callId?: string;
  original?: string;
};

export type SessionChangeListener = (change: SessionChange, session: Session) => void;

const changeListeners = new WeakMap<Session, Set<SessionChangeListener>>();

/**
 * Calls `listener` synchronously with every change the library makes to `session`: each message
 * that enters it (through `extendSession`, so through the loop), compaction's replacements and
 * approval updates. Persistence uses it to record each change the moment it happens. Kept outside
 * the session object, so the session stays plain JSON. Returns an unbind function.
 */
export function onSessionChange(session: Session, listener: SessionChangeListener): () => void {
  let set = changeListeners.get(session);
  if (set === undefined) changeListeners.set(session, (set = new Set()));
  set.add(listener);
  return () => {
    set.delete(listener);
  };
}

/** Like `onSessionChange`, for appended messages only. */
export function onSessionExtend(session: Session, listener: SessionListener): () => void {
  return onSessionChange(session, (change, changed) => {
    if (change.type === "append") listener(change.message, changed);
  });
}

/**
 * Replaces `deleteCount` messages at `index` with `inserted` and reports it as a `splice` change:
 * the one way to remove messages that persistence can follow. Returns the removed messages.
 */
export function spliceSession(
  session: Session,
  index: number,
  deleteCount: number,
  inserted: Message[] = [],
  details?: JsonObject,
): Message[] {
  const removed = session.messages.splice(index, deleteCount, ...inserted);
  const change: SessionChange = { type: "splice", index, removed, inserted, reason: "compaction" };
  if (details !== undefined) change.details = details;
  notifySessionChange(session, change);
  return removed;
}

/** Reports a change made to `session` to its listeners (for code that changes sessions the way the library does). */
export function notifySessionChange(session: Session, change: SessionChange): void {
  if (change.type === "replace" || change.type === "update" || change.type === "splice") noteEdit(session, change);
  const set = changeListeners.get(session);
  if (set === undefined) return;
  for (const listener of set) listener(change, session);
}

/**
 * What changed among a session's stored messages since its reader last looked (`markSessionEdits`):
 * the library's own readers (the cache event's prefix tracker, the clearer) follow a session with
 * this instead of a listener, so a session's growth costs them nothing: an append is no edit.
 */
export type SessionEdits = {
  /** Replacements, updates and splices since the mark. */
  count: number;
  /** The lowest index a replacement, update or splice touched since the mark (`Infinity`: none). */
  lowest: number;
  /** The reason of the change at `lowest` (`splice` for a splice, which removes messages). */
  lowestBy: "compaction" | "guardrail" | "approval" | "splice" | undefined;
  /** Whether a splice removed or inserted messages since the mark: indices after it moved. */
  spliced: boolean;
};

// Beside the session, as its listeners are: the session stays plain JSON.
const editRecords = new WeakMap<Session, SessionEdits[]>();

/**
 * A record of `session`'s edits (replacements, updates, splices) from now on, for one reader:
 * it reads the fields, and `markSessionEdits` starts them over. Appends are not recorded.
 */
export function followSessionEdits(session: Session): SessionEdits {
  const edits: SessionEdits = { count: 0, lowest: Infinity, lowestBy: undefined, spliced: false };
  const records = editRecords.get(session);
  if (records === undefined) editRecords.set(session, [edits]);
  else records.push(edits);
  return edits;
}

/** How many readers follow `session`'s edits now (each run's end lets go of what it followed). */
export function sessionEditReaders(session: Session): number {
  return editRecords.get(session)?.length ?? 0;
}

/** Stops recording edits of `session` into `edits`. */
export function unfollowSessionEdits(session: Session, edits: SessionEdits): void {
  const records = editRecords.get(session);
  const index = records?.indexOf(edits) ?? -1;
  if (index >= 0) records!.splice(index, 1);
}

/** Starts `edits` over: what changes from now on. */
export function markSessionEdits(edits: SessionEdits): void {
  edits.count = 0;
  edits.lowest = Infinity;
  edits.lowestBy = undefined;
  edits.spliced = false;
}

function noteEdit(session: Session, change: SessionChange & { type: "replace" | "update" | "splice" }): void {
  // A task's record is metadata no request carries: its update edits nothing a reader of edits follows.
  const reason = change.type === "splice" ? "splice" : change.reason;
  if (reason === "task") return;
  const records = editRecords.get(session);
  if (records === undefined) return;
  for (const edits of records) {
    edits.count++;
    if (change.type === "splice") edits.spliced = true;
    if (change.index < edits.lowest) {
      edits.lowest = change.index;
      edits.lowestBy = reason;
    }
  }
}

/** A kept output, or how to read it back (a store reads a blob only when it is asked for). */
export type KeptOutput = JsonValue | (() => Promise<JsonValue>);

// Kept beside the session, as the listeners are: the session itself stays plain JSON.
const keptOutputs = new WeakMap<Session, Map<string, KeptOutput>>();

/**
 * Keeps the whole output of tool call `id` aside, for `recall_output`, while the session holds a
 * shorter version of it. Listeners hear a `keep` change (a store records the output), unless
 * `recorded` says the record already holds it: a `replace` change's `previous`, or a log being read.
 */
export function keepOutput(
  session: Session,
  id: string,
  output: KeptOutput,
  options: { recorded?: boolean } = {},
): void {
  let kept = keptOutputs.get(session);
  if (kept === undefined) keptOutputs.set(session, (kept = new Map()));
  kept.set(id, output);
  keptCount++;
  if (options.recorded !== true && typeof output !== "function")
    notifySessionChange(session, { type: "keep", id, output });
}

// Every output kept so far, in any session: a reader that has seen this count before knows that no
// session's kept outputs changed since, without looking its own up.
let keptCount = 0;

/** How many outputs were kept aside (`keepOutput`) in this process so far, in all sessions together. */
export function keptOutputCount(): number {
  return keptCount;
}

/** Whether any output of the session was kept aside (`keepOutput`): `recall_output` has something to read. */
export function hasKeptOutputs(session: Session): boolean {
  return (keptOutputs.get(session)?.size ?? 0) > 0;
}

/** The whole output of tool call `id` kept aside by `keepOutput`, or `undefined` if none was kept. */
export async function keptOutput(session: Session, id: string): Promise<JsonValue | undefined> {
  const kept = keptOutputs.get(session)?.get(id);
  return typeof kept === "function" ? kept() : kept;
}

const sessionIds = new WeakMap<Session, string>();

/**
 * Names a session by the id it has in a store (`store.open(id)`, a log file's base name), kept
 * beside the session like its listeners; the loop passes it to models as `context.sessionId`.
 */
export function setSessionId(session: Session, id: string): void {
  sessionIds.set(session, id);
}

/** The id a store gave the session (`setSessionId`), if it is bound to one. */
export function sessionIdOf(session: Session): string | undefined {
  return sessionIds.get(session);
}

/** A message a model turn produces: assistant text, thinking or a tool call. */
export function isModelMessage(message: Message): message is ModelMessage {
  return "role" in message ? message.role === "assistant" : message.type !== "tool_result";
}

export function isToolCall(message: Message): message is ToolCallMessage {
  return "type" in message && message.type === "tool_call";
}

export function isToolResult(message: Message): message is ToolResultMessage {
  return "type" in message && message.type === "tool_result";
}

/**
 * The deepest nesting a JSON file read from outside (a session file, a store's log, a cassette, a
 * config) may have. A session is plain JSON, and `JSON.stringify` and `structuredClone` overflow
 * the stack a few thousand levels down: a value nested deeper would load, then fail as a bare
 * `RangeError` wherever it is copied or written.
 */
export const maxJsonDepth = 1000;

/**
 * The deepest a message may nest to enter a session a store records: a log entry wraps the message
 * in a few levels of its own, and the entry as a whole is held to `maxJsonDepth` when loaded.
 */
export const maxMessageDepth = maxJsonDepth - 8;

/**
 * Whether a value nests more than `limit` arrays and objects deep. No recursion, so a value built
 * deeper than the stack allows is measured too; a cycle is as deep as any limit.
 */
export function valueNestedDeeperThan(value: unknown, limit = maxJsonDepth): boolean {
  if (typeof value !== "object" || value === null) return false;
  const values: unknown[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const current = values.pop() as object;
    const depth = depths.pop()!;
    if (depth > limit) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child !== "object" || child === null) continue;
      values.push(child);
      depths.push(depth + 1);
    }
  }
  return false;
}

/**
 * Whether JSON text nests more than `limit` levels deep (brackets inside strings not counted).
 * One pass, no recursion: checked before `JSON.parse`, so nothing too deep is ever built.
 */
export function jsonNestedDeeperThan(text: string, limit = maxJsonDepth): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 92) index++;
      else if (code === 34) inString = false;
    } else if (code === 34) inString = true;
    else if (code === 123 || code === 91) {
      if (++depth > limit) return true;
    } else if (code === 125 || code === 93) depth--;
  }
  return false;
}
