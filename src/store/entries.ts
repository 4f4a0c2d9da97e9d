import {
  keepOutput,
  messageContentProblem,
  now,
  type GuardrailRecord,
  type JsonObject,
  type JsonValue,
  type Message,
  type Session,
  type SessionChange,
} from "../session.ts";
import { StoreError } from "./store-error.ts";

/**
 * The entries of a session log, one per line. Reading a log applies them in order: a `message`
 * entry appends its message; `replace` and `update` put a new version of the message at `index`
 * (a 0-based position in the messages read so far). Other entries (custom ones, and entry types
 * this version does not know) leave the session as it is and are kept in the log untouched.
 */
export type SessionEntry =
  MessageEntry | ReplaceEntry | UpdateEntry | SpliceEntry | KeptEntry | GuardrailEntry | CustomEntry;

/**
 * A guardrail answered (see `GuardrailRecord`). It does not change the session; with `original`
 * it holds a blocked text that never entered the session (the audit trail).
 */
export type GuardrailEntry = { type: "guardrail"; ts?: string } & GuardrailRecord;

/**
 * The whole output of tool call `id`, kept aside for `recall_output` while the session holds its
 * head and tail (`kept: "offloaded"`); written before the result that refers to it. It does not
 * change the session.
 */
export type KeptEntry = { type: "kept"; id: string; ts?: string; output: JsonValue };

/**
 * `removed` messages at `index` were replaced by `inserted` (compaction that summarized or
 * dropped older turns). `details` records the summary, tokens before/after and the first kept message.
 */
export type SpliceEntry = {
  type: "splice";
  index: number;
  reason: string;
  ts?: string;
  removed: Message[];
  inserted: Message[];
  details?: JsonObject;
};

/** A message entered the session (through `extendSession`: the loop, `send`, the helpers). */
export type MessageEntry = { type: "message"; message: Message };

/** The message at `index` was replaced by a new object (`reason: "compaction"`); `previous` is what it replaced. */
export type ReplaceEntry = {
  type: "replace";
  index: number;
  reason: string;
  ts?: string;
  message: Message;
  previous: Message;
  /** What made the replacement (`{ strategy: "clear-tool-results" }`). */
  details?: JsonObject;
};

/** Fields were set on the message at `index` in place (`reason: "approval"`: a pause mark or a decision); `message` is its new state. */
export type UpdateEntry = { type: "update"; index: number; reason: string; ts?: string; message: Message };

/** An entry of the application's own (`appendEntry`); it does not change the session. */
export type CustomEntry = { type: "custom"; customType: string; ts?: string; data?: JsonValue };

/** An entry as read from a log: one of ours, or one of a newer version (kept as it is). */
export type LogEntry = SessionEntry | { type: string; [field: string]: unknown };

/** The entry that records a change of a session. */
export function entryFor(change: SessionChange): SessionEntry {
  switch (change.type) {
    case "append":
      return { type: "message", message: change.message };
    case "replace": {
      const entry: ReplaceEntry = {
        type: "replace",
        index: change.index,
        reason: change.reason,
        ts: now(),
        message: change.message,
        previous: change.previous,
      };
      if (change.details !== undefined) entry.details = change.details;
      return entry;
    }
    case "keep":
      return { type: "kept", id: change.id, ts: now(), output: change.output };
    case "guardrail":
      return { type: "guardrail", ts: now(), ...change.verdict };
    case "update":
      return { type: "update", index: change.index, reason: change.reason, ts: now(), message: change.message };
    case "splice": {
      const entry: SpliceEntry = {
        type: "splice",
        index: change.index,
        reason: change.reason,
        ts: now(),
        removed: change.removed,
        inserted: change.inserted,
      };
      if (change.details !== undefined) entry.details = change.details;
      return entry;
    }
  }
}

/**
 * The session a log's entries describe. Throws a `malformed` StoreError naming the file and line
 * for an entry that cannot be applied (not an object, no type, a known type with the wrong shape,
 * an index outside the session).
 */
export function replayEntries(
  records: readonly { value: unknown; line: number }[],
  path: string,
): { session: Session; entries: LogEntry[]; kept: Map<string, JsonValue> } {
  const messages: Message[] = [];
  // Whole outputs the session holds shortened: offloaded ones, and cleared ones (a replacement's `previous`).
  const kept = new Map<string, JsonValue>();
  // The line each message came from, kept in step with `messages`, to name it in an error.
  const lines: number[] = [];
  const entries: LogEntry[] = [];
  for (const { value, line } of records) {
    const problem = entryProblem(value, messages.length);
    if (problem !== undefined) throw new StoreError(`${path}:${line}: ${problem}`, { code: "malformed", path, line });
    const entry = value as LogEntry;
    entries.push(entry);
    if (entry.type === "message") {
      messages.push((entry as MessageEntry).message);
      lines.push(line);
    } else if (entry.type === "replace" || entry.type === "update") {
      const { index, message } = entry as ReplaceEntry | UpdateEntry;
      const previous = messages[index]!;
      if ("type" in message && message.type === "tool_result" && message.kept === "cleared")
        if ("type" in previous && previous.type === "tool_result" && previous.kept === undefined)
          kept.set(previous.id, previous.output);
      messages[index] = message;
      lines[index] = line;
    } else if (entry.type === "kept") {
      const { id, output } = entry as KeptEntry;
      kept.set(id, output);
    } else if (entry.type === "splice") {
      const { index, removed, inserted } = entry as SpliceEntry;
      messages.splice(index, removed.length, ...inserted);
      lines.splice(index, removed.length, ...inserted.map(() => line));
    }
  }
  const openTwice = firstReopenedCall(messages);
  if (openTwice !== -1) {
    const line = lines[openTwice]!;
    const id = (messages[openTwice] as { id: string }).id;
    throw new StoreError(
      `${path}:${line}: a second unanswered tool call with id ${JSON.stringify(id)}: a resume would run both`,
      { code: "malformed", path, line },
    );
  }
  const answeredTwice = messages.findIndex(answersAnsweredCall());
  if (answeredTwice !== -1) {
    const line = lines[answeredTwice]!;
    const id = (messages[answeredTwice] as { id: string }).id;
    throw new StoreError(
      `${path}:${line}: a second result for tool call ${JSON.stringify(id)}: every call is answered once`,
      { code: "malformed", path, line },
    );
  }
  return { session: { messages }, entries, kept };
}

/** Keeps the outputs a log kept aside (`replayEntries`' `kept`) for the session read from it, for `recall_output`. */
export function restoreKeptOutputs(session: Session, kept: ReadonlyMap<string, JsonValue>): void {
  for (const [id, output] of kept) keepOutput(session, id, output, { recorded: true });
}

// A predicate over the session's messages in order: true for a tool_result whose call already
// has one (a call id may come back in a later turn, from providers that reuse ids: that call is
// answered anew).
function answersAnsweredCall(): (message: Message) => boolean {
  const open = new Set<string>();
  const answered = new Set<string>();
  return (message) => {
    if (!("type" in message)) return false;
    if (message.type === "tool_call") {
      open.add(message.id);
      answered.delete(message.id);
    } else if (message.type === "tool_result") {
      if (answered.has(message.id)) return true;
      open.delete(message.id);
      answered.add(message.id);
    }
    return false;
  };
}

// The index of a tool_call whose id an earlier call still waits under (no result between them), or -1.
function firstReopenedCall(messages: readonly unknown[]): number {
  const open = new Set<string>();
  for (const [index, message] of messages.entries()) {
    if (!isObject(message) || typeof message.id !== "string") continue;
    if (message.type === "tool_call") {
      if (open.has(message.id)) return index;
      open.add(message.id);
    } else if (message.type === "tool_result") open.delete(message.id);
  }
  return -1;
}

function entryProblem(value: unknown, messageCount: number): string | undefined {
  if (!isObject(value)) return "an entry must be a JSON object";
  if (typeof value.type !== "string") return 'an entry needs a string "type"';
  switch (value.type) {
    case "message":
      return messageProblem(value.message, value.type);
    case "replace":
    case "update": {
      const index = value.index;
      if (typeof index !== "number" || !Number.isInteger(index) || index < 0)
        return `a "${value.type}" entry needs a non-negative integer "index"`;
      if (index >= messageCount)
        return `"${value.type}" of message ${index}, but the session has ${messageCount} messages at this point`;
      return messageProblem(value.message, value.type);
    }
    case "splice": {
      const index = value.index;
      if (typeof index !== "number" || !Number.isInteger(index) || index < 0)
        return 'a "splice" entry needs a non-negative integer "index"';
      if (!Array.isArray(value.removed) || !Array.isArray(value.inserted))
        return 'a "splice" entry needs "removed" and "inserted" message arrays';
      const inserted = value.inserted
        .map((message) => messageProblem(message, "splice"))
        .find((problem) => problem !== undefined);
      if (inserted !== undefined) return inserted;
      return index + value.removed.length > messageCount
        ? `"splice" of messages ${index}..${index + value.removed.length - 1}, but the session has ${messageCount} messages at this point`
        : undefined;
    }
    case "kept":
      return typeof value.id === "string" && "output" in value
        ? undefined
        : 'a "kept" entry needs a string "id" and an "output"';
    case "custom":
      return typeof value.customType === "string" ? undefined : 'a "custom" entry needs a string "customType"';
    case "guardrail":
      return typeof value.name === "string" && typeof value.kind === "string" && typeof value.action === "string"
        ? undefined
        : 'a "guardrail" entry needs string "name", "kind" and "action"';
    default:
      return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * What is wrong with a message read from a log, checked as far as the next run relies on it: the
 * known roles and types have their fields with the right JSON types (ids and names are strings,
 * a call's input is an object, text is a string). Messages of roles and types this version does
 * not know are kept as they are.
 */
function messageProblem(value: unknown, entryType = "message", depth = 0): string | undefined {
  if (!isObject(value) || (typeof value.role !== "string" && typeof value.type !== "string"))
    return `a "${entryType}" entry needs a message object (with a "role" or a "type")`;
  const kind =
    typeof value.role === "string"
      ? `a ${JSON.stringify(value.role)} message`
      : `a ${JSON.stringify(value.type)} message`;
  const wrong = (field: string, expected: string): string =>
    `${kind} needs ${expected} "${field}", not ${describe(value[field])}`;
  const mark = guardrailMarkProblem(value.guardrail, kind) ?? metadataProblem(value, kind);
  if (mark !== undefined) return mark;
  if (value.role === "user") {
    if (typeof value.content !== "string") return messageContentProblem(value as Message);
  } else if (value.role === "system") {
    if (typeof value.content !== "string") return wrong("content", "a string");
  } else if (value.role === "assistant" || value.type === "thinking") {
    if (typeof value.content !== "string") return wrong("content", "a string");
    return optionalFieldsProblem(value, kind) ?? turnEndProblem(value, kind);
  } else if (value.type === "tool_call") {
    if (typeof value.id !== "string" || value.id === "") return wrong("id", "a non-empty string");
    if (typeof value.name !== "string" || value.name === "") return wrong("name", "a non-empty string");
    if (!isObject(value.input)) return wrong("input", "an object");
    return (
      optionalFieldsProblem(value, kind) ??
      turnEndProblem(value, kind) ??
      approvalProblem(value.approval, kind, depth) ??
      heldResultProblem(value.heldResult, kind)
    );
  } else if (value.type === "tool_result") {
    if (typeof value.id !== "string" || value.id === "") return wrong("id", "a non-empty string");
    if (!("output" in value)) return `${kind} needs an "output"`;
    if (value.isError !== undefined && typeof value.isError !== "boolean") return wrong("isError", "a boolean");
    if (value.waitMs !== undefined && !isCount(value.waitMs)) return wrong("waitMs", "a non-negative integer");
    if (value.kept !== undefined && value.kept !== "cleared" && value.kept !== "offloaded")
      return `${kind} needs "kept" to be "cleared", "offloaded" or absent, not ${JSON.stringify(value.kept)}`;
    const spent =
      subagentUsageProblem(value.subagentUsage, kind) ??
      programRecordProblem(value, kind, "") ??
      taskRecordProblem(value.task, kind, "task");
    if (spent !== undefined) return spent;
    if (value.content !== undefined) return messageContentProblem(value as Message);
  }
  return undefined;
}

// A code call's record: the calls its program made (each a call with what it gave the program) and its console lines.
function programRecordProblem(value: Record<string, unknown>, kind: string, prefix: string): string | undefined {
  const { programCalls, logs } = value;
  if (programCalls !== undefined) {
    if (!Array.isArray(programCalls))
      return `${kind} needs an array "${prefix}programCalls" or none, not ${describe(programCalls)}`;
    for (const [index, call] of programCalls.entries()) {
      const field = `${prefix}programCalls[${index}]`;
      if (!isObject(call)) return `${kind} needs an object "${field}", not ${describe(call)}`;
      for (const key of ["id", "name"])
        if (typeof call[key] !== "string" || call[key] === "")
          return `${kind} needs a non-empty string "${field}.${key}", not ${describe(call[key])}`;
      if (!isObject(call.input)) return `${kind} needs an object "${field}.input", not ${describe(call.input)}`;
      if (!("output" in call)) return `${kind} needs "${field}.output"`;
      if (call.isError !== undefined && typeof call.isError !== "boolean")
        return `${kind} needs a boolean "${field}.isError" or none, not ${describe(call.isError)}`;
      if (call.content !== undefined) {
        const problem = messageContentProblem({ type: "tool_result", id: call.id, ...call } as Message);
        if (problem !== undefined) return `${kind} "${field}": ${problem}`;
      }
    }
  }
  if (logs === undefined) return undefined;
  if (!Array.isArray(logs)) return `${kind} needs an array "${prefix}logs" or none, not ${describe(logs)}`;
  const line = logs.findIndex((entry) => typeof entry !== "string");
  return line === -1 ? undefined : `${kind} needs a string "${prefix}logs[${line}]", not ${describe(logs[line])}`;
}

// The text field each guardrail action carries.
const verdictFields: Readonly<Record<string, string | undefined>> = {
  allow: undefined,
  block: "message",
  redact: "replacement",
  retry: "feedback",
};

// A guardrail's mark on a message (blocked, redacted, a retry's feedback): the verdict and the guardrail's name.
function guardrailMarkProblem(mark: unknown, kind: string): string | undefined {
  if (mark === undefined) return undefined;
  if (!isObject(mark) || typeof mark.name !== "string")
    return `${kind} needs "guardrail" to be an object with a string "name", or none, not ${describe(mark)}`;
  const action = String(mark.action);
  if (!Object.hasOwn(verdictFields, action))
    return `${kind} needs "guardrail.action" to be "allow", "block", "redact" or "retry", not ${JSON.stringify(mark.action) ?? "nothing"}`;
  const field = verdictFields[action];
  if (field !== undefined && typeof mark[field] !== "string")
    return `${kind} needs a string "guardrail.${field}", not ${describe(mark[field])}`;
  return undefined;
}

// What any message may carry beside its content: when it entered, which agent's model wrote it.
function metadataProblem(value: Record<string, unknown>, kind: string): string | undefined {
  for (const field of ["ts", "agent"])
    if (value[field] !== undefined && typeof value[field] !== "string")
      return `${kind} needs a string "${field}" or none, not ${describe(value[field])}`;
  return undefined;
}

// The fields of a model's message the loop and the adapters read: strings where they send them on
// (or price and report by), flags that are `true`.
function optionalFieldsProblem(value: Record<string, unknown>, kind: string): string | undefined {
  const strings = ["signature", "provider", "wireId", "inputError", "rawStopReason", "stopReason"];
  for (const field of [...strings, "model", "responseId", "answerFrom"])
    if (value[field] !== undefined && typeof value[field] !== "string")
      return `${kind} needs a string "${field}" or none, not ${describe(value[field])}`;
  for (const field of ["compacted", "redacted", "generatedId"])
    if (value[field] !== undefined && value[field] !== true)
      return `${kind} needs "${field}" to be true or absent, not ${describe(value[field])}`;
  return undefined;
}

function turnEndProblem(value: Record<string, unknown>, kind: string): string | undefined {
  if (value.stopDetails !== undefined && !isObject(value.stopDetails))
    return `${kind} needs an object "stopDetails" or none, not ${describe(value.stopDetails)}`;
  const overrun = budgetOverrunProblem(value.budgetExceeded, kind);
  if (overrun !== undefined) return overrun;
  return value.usage === undefined ? undefined : usageProblem(value.usage, kind, "usage");
}

// The mark of a run that went over its budget: the next run compares its own budget with `spent`.
function budgetOverrunProblem(overrun: unknown, kind: string): string | undefined {
  if (overrun === undefined) return undefined;
  if (!isObject(overrun) || !isObject(overrun.budget) || !isObject(overrun.spent))
    return `${kind} needs "budgetExceeded" to be an object with objects "budget" and "spent", or none, not ${describe(overrun)}`;
  for (const [field, amount] of [
    ["budget.usd", overrun.budget.usd],
    ["budget.tokens", overrun.budget.tokens],
    ["spent.usd", overrun.spent.usd],
    ["spent.tokens", overrun.spent.tokens ?? "nothing"],
  ] as const)
    if (amount !== undefined && (typeof amount !== "number" || !(amount >= 0)))
      return `${kind} needs "budgetExceeded.${field}" to be a non-negative number, not ${describe(amount)}`;
  return undefined;
}

// Token counts: non-negative integers, input and output always there.
function usageProblem(usage: unknown, kind: string, field: string): string | undefined {
  if (!isObject(usage)) return `${kind} needs an object "${field}" or none, not ${describe(usage)}`;
  for (const [name, count] of Object.entries(usage))
    if (!isCount(count)) return `${kind} needs "${field}.${name}" to be a non-negative integer, not ${describe(count)}`;
  if (usage.inputTokens === undefined || usage.outputTokens === undefined)
    return `${kind} needs "${field}.inputTokens" and "${field}.outputTokens"`;
  return undefined;
}

// A subagent's model calls, summed into the run's metrics and cost: counts and a model name.
function subagentUsageProblem(spent: unknown, kind: string): string | undefined {
  if (spent === undefined) return undefined;
  if (!Array.isArray(spent)) return `${kind} needs an array "subagentUsage" or none, not ${describe(spent)}`;
  for (const [index, entry] of spent.entries()) {
    const field = `subagentUsage[${index}]`;
    if (!isObject(entry)) return `${kind} needs an object "${field}", not ${describe(entry)}`;
    if (entry.model !== undefined && typeof entry.model !== "string")
      return `${kind} needs a string "${field}.model" or none, not ${describe(entry.model)}`;
    if (!isCount(entry.calls))
      return `${kind} needs "${field}.calls" to be a non-negative integer, not ${describe(entry.calls)}`;
    const problem = usageProblem(entry.usage, kind, `${field}.usage`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

// A nested session is a subagent's, resumed through its parent call: held to the same rules, to a bounded depth.
const maxNestedDepth = 32;

function approvalProblem(approval: unknown, kind: string, depth: number): string | undefined {
  if (approval === undefined) return undefined;
  if (!isObject(approval)) return `${kind} needs an object "approval" or none, not ${describe(approval)}`;
  if (approval.status !== "pending" && approval.status !== "approved" && approval.status !== "denied")
    return `${kind} needs "approval.status" to be "pending", "approved" or "denied", not ${JSON.stringify(approval.status) ?? "nothing"}`;
  if (approval.reason !== undefined && typeof approval.reason !== "string")
    return `${kind} needs a string "approval.reason" or none, not ${describe(approval.reason)}`;
  if (approval.input !== undefined && !isObject(approval.input))
    return `${kind} needs an object "approval.input" or none, not ${describe(approval.input)}`;
  if (approval.at !== undefined && typeof approval.at !== "string")
    return `${kind} needs a string "approval.at" or none, not ${describe(approval.at)}`;
  const decider = deciderProblem(approval.decidedBy, `${kind} "approval.decidedBy"`);
  if (decider !== undefined) return decider;
  if (approval.consulted !== undefined) {
    if (!Array.isArray(approval.consulted))
      return `${kind} needs an array "approval.consulted" or none, not ${describe(approval.consulted)}`;
    for (const [index, link] of approval.consulted.entries()) {
      const problem = deciderProblem(link, `${kind} "approval.consulted[${index}]"`);
      if (problem !== undefined) return problem;
    }
  }
  const nested = approval.nested;
  if (nested === undefined) return undefined;
  if (!isObject(nested) || !Array.isArray(nested.messages))
    return `${kind} needs "approval.nested" to be a session ({ messages: [...] }), not ${describe(nested)}`;
  if (depth >= maxNestedDepth) return `${kind} has sessions nested in "approval.nested" over ${maxNestedDepth} deep`;
  for (const [index, message] of nested.messages.entries()) {
    const problem = messageProblem(message, "message", depth + 1);
    if (problem !== undefined) return `"approval.nested.messages[${index}]": ${problem}`;
  }
  const reopened = firstReopenedCall(nested.messages);
  if (reopened !== -1)
    return `"approval.nested.messages[${reopened}]": a second unanswered tool call with id ${JSON.stringify((nested.messages[reopened] as { id: string }).id)}`;
  return undefined;
}

// Who decided a call: a readers' label (`by`) and plain data beside it.
function deciderProblem(decider: unknown, field: string): string | undefined {
  if (decider === undefined) return undefined;
  if (!isObject(decider)) return `${field} must be an object, not ${describe(decider)}`;
  const by = decider.by;
  if (by !== "rule" && by !== "classifier" && by !== "human" && by !== "hook" && by !== "policy")
    return `${field}.by must be "rule", "classifier", "human", "hook" or "policy", not ${JSON.stringify(by) ?? "nothing"}`;
  for (const key of ["rule", "action", "name", "decision", "reason", "user", "model", "error"])
    if (decider[key] !== undefined && typeof decider[key] !== "string")
      return `${field}.${key} must be a string, not ${describe(decider[key])}`;
  for (const key of ["confidence", "costUsd"])
    if (decider[key] !== undefined && typeof decider[key] !== "number")
      return `${field}.${key} must be a number, not ${describe(decider[key])}`;
  // A classifier's usage is summed into the session's cost (sessionMetrics): counts, as a call's.
  return decider.usage === undefined ? undefined : usageProblem(decider.usage, field, "usage");
}

// A held result becomes its call's result: it has an output and nothing that could name another call.
// A held result is a result that has yet to enter: its output (as the output guardrails left it,
// with their mark), parts and error flag; a background call's task record, which its task's
// settling updates where it is held.
const heldFields = new Set([
  "output",
  "content",
  "isError",
  "guardrail",
  "subagentUsage",
  "programCalls",
  "logs",
  "task",
]);

function heldResultProblem(held: unknown, kind: string): string | undefined {
  if (held === undefined) return undefined;
  if (!isObject(held) || !("output" in held))
    return `${kind} needs "heldResult" to be an object with an "output", not ${describe(held)}`;
  const extra = Object.keys(held).find((key) => !heldFields.has(key));
  if (extra !== undefined)
    return `${kind} has "heldResult.${extra}": a held result holds only output, content, isError, guardrail, subagentUsage, programCalls, logs and task`;
  const mark =
    taskRecordProblem(held.task, kind, "heldResult.task") ??
    guardrailMarkProblem(held.guardrail, `${kind}'s heldResult`) ??
    subagentUsageProblem(held.subagentUsage, `${kind}'s heldResult`) ??
    programRecordProblem(held, kind, "heldResult.");
  if (mark !== undefined) return mark;
  if (held.isError !== undefined && typeof held.isError !== "boolean")
    return `${kind} needs a boolean "heldResult.isError" or none, not ${describe(held.isError)}`;
  if (held.content !== undefined) return messageContentProblem({ type: "tool_result", id: "", ...held } as Message);
  return undefined;
}

const taskStatuses = new Set(["running", "completed", "failed", "cancelled", "lost"]);

// A background call's task record: what a resume reruns or reports by, and the outcome (its parts
// checked as any result's) that its delivery gives the model.
function taskRecordProblem(task: unknown, kind: string, field: string): string | undefined {
  if (task === undefined) return undefined;
  if (!isObject(task)) return `${kind} needs "${field}" to be a task record (an object), not ${describe(task)}`;
  if (typeof task.id !== "string" || task.id === "")
    return `${kind} needs a non-empty string "${field}.id", not ${describe(task.id)}`;
  if (!taskStatuses.has(task.status as string))
    return `${kind} needs "${field}.status" to be running, completed, failed, cancelled or lost, not ${JSON.stringify(task.status) ?? "nothing"}`;
  if (task.onRestart !== "rerun" && task.onRestart !== "lost")
    return `${kind} needs "${field}.onRestart" to be "rerun" or "lost", not ${JSON.stringify(task.onRestart) ?? "nothing"}`;
  if (!isCount(task.attempt)) return `${kind} needs "${field}.attempt" to be a count, not ${describe(task.attempt)}`;
  for (const key of ["startedAt", "settledAt", "reason"])
    if (task[key] !== undefined && typeof task[key] !== "string")
      return `${kind} needs a string "${field}.${key}" or none, not ${describe(task[key])}`;
  if (task.isError !== undefined && typeof task.isError !== "boolean")
    return `${kind} needs a boolean "${field}.isError" or none, not ${describe(task.isError)}`;
  if (task.content === undefined) return undefined;
  const problem = messageContentProblem({
    type: "tool_result",
    id: task.id,
    output: null,
    content: task.content,
  } as Message);
  return problem === undefined ? undefined : `${kind} "${field}": ${problem}`;
}

function isCount(value: unknown): boolean {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  return Array.isArray(value) ? "an array" : typeof value === "object" ? "an object" : `a ${typeof value}`;
}
