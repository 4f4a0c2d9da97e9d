// @ts-check
/**
 * `/assets/render.js`: one turn of the timeline as DOM. Each model call is a "step" (its thinking,
 * text and tool calls, each call with its result); every `<details>` has a `data-key` so the page
 * can keep what the reader opened when a live update redraws the turn.
 *
 * Any field of any entry may hold any JSON value: a value drawn as text goes through `textOf`, a
 * class name is chosen among the page's own, and an entry that still fails to draw is shown, and
 * listed, as a problem while the rest of the turn draws.
 */
import {
  h,
  errorText,
  formatCount,
  formatTokens,
  formatDuration,
  formatClock,
  formatDateTime,
  timeOf,
  pretty,
  plural,
} from "./dom.js";
import { contextOf } from "./context-usage.js";
import { describe, isCount, isObject } from "./entry-check.js";
import { callCost, formatUsd } from "./model-cost.js";
import { denialOf, isAbortMark, isModelMessage, waitOf } from "./turn-stats.js";
import { renderEditDiff } from "./edit-diff.js";
import { renderContent } from "./content-view.js";
import { renderDecision } from "./approval-view.js";
import { renderProgramCalls } from "./program-calls-view.js";
import { renderTask } from "./task-view.js";

/** @typedef {import("./timeline.js").Turn} Turn */
/** @typedef {import("./turn-stats.js").TurnStats} TurnStats */
/** @typedef {import("./timeline.js").Item} Item */
/** @typedef {import("./timeline.js").MessageItem} MessageItem */
/** @typedef {import("./timeline.js").CompactionItem} CompactionItem */
/** @typedef {import("./timeline.js").EntryItem} EntryItem */
/** @typedef {import("./timeline.js").JsonObject} JsonObject */
/** @typedef {import("./timeline.js").Problem} Problem */
/** @typedef {{ items: MessageItem[], startedAfter: number | undefined }} Step */

/**
 * The turn as DOM, and the entries of it that could not be drawn (each is drawn as a problem in its place).
 * @param {Turn} turn
 * @param {TurnStats} stats
 * @returns {{ node: HTMLElement, problems: Problem[] }}
 */
export function renderTurn(turn, stats) {
  /** @type {Problem[]} */
  const problems = [];
  const body = renderItems(turn.items, stats.removed, problems);
  if (turn.number === 0) return { node: h("section.turn-zero", { "data-turn": 0 }, body), problems };
  const userItem = turn.items[0];
  const node = h(
    "section.turn" + (stats.removed ? ".removed" : ""),
    { id: "turn-" + turn.number, "data-turn": turn.number },
    h(
      "header.turn-head",
      null,
      h("a.turn-number", { href: "#turn-" + turn.number }, "Turn " + turn.number),
      h("span.turn-time", { title: formatDateTime(stats.start) }, formatClock(stats.start)),
      h("span.turn-meta", null, turnMeta(stats)),
      turnContext(turn.context),
      h("span.flags", null, turnFlags(stats, userItem)),
    ),
    h("div.turn-body", null, body),
  );
  return { node, problems };
}

/** @param {TurnStats} stats */
function turnMeta(stats) {
  const parts = [
    formatDuration(stats.durationMs),
    stats.modelCalls > 0 && plural(stats.modelCalls, "model call"),
    stats.toolCalls > 0 && plural(stats.toolCalls, "tool call"),
  ];
  if (stats.waitMs > 0) parts.push("waited " + formatDuration(stats.waitMs) + " for approval");
  if (stats.inputTokens || stats.outputTokens)
    parts.push(formatTokens(stats.inputTokens) + " in · " + formatTokens(stats.outputTokens) + " out");
  if (stats.costUsd !== undefined) parts.push(formatUsd(stats.costUsd));
  return parts.filter(Boolean).join(" · ");
}

/**
 * The session's estimated context once the turn was done, its parts in the title.
 * @param {readonly number[] | undefined} counts
 */
function turnContext(counts) {
  if (counts === undefined) return undefined;
  const { total, parts } = contextOf(counts);
  const title =
    "estimated context after this turn\n" +
    parts.map((part) => part.name + ": ~" + formatCount(part.tokens) + " tokens").join("\n");
  return h("span.turn-context", { title, "data-tokens": String(total) }, "context ~" + formatTokens(total));
}

/**
 * @param {TurnStats} stats
 * @param {Item | undefined} userItem
 */
function turnFlags(stats, userItem) {
  const removedBy = userItem && userItem.kind === "message" ? userItem.removedBy : undefined;
  return [
    stats.errors > 0 && h("span.flag.error", null, plural(stats.errors, "error")),
    stats.denied > 0 && h("span.flag.denied", null, stats.denied + " denied"),
    stats.pending > 0 && h("span.flag.pending", null, stats.pending + " awaiting approval"),
    stats.aborted && h("span.flag.aborted", null, "aborted"),
    unusualStop(stats.stopReason) && !stats.aborted && h("span.flag.stop", null, stats.stopReason),
    removedBy &&
      h(
        "span.flag.removed",
        { title: "a compaction at line " + removedBy.line + " removed this turn from the session" },
        "compacted away",
      ),
  ];
}

/**
 * @param {unknown} reason
 * @returns {reason is string}
 */
function unusualStop(reason) {
  return typeof reason === "string" && reason !== "end_turn" && reason !== "tool_use";
}

/**
 * Items in order; runs of model messages become steps, a tool result is drawn with its call.
 * turnRemoved: the turn's header already says compaction removed it, so its steps do not.
 * @param {readonly Item[]} items
 * @param {boolean} turnRemoved
 * @param {Problem[]} problems
 */
function renderItems(items, turnRemoved, problems) {
  /** @type {(HTMLElement | Step)[]} */
  const nodes = [];
  /** @type {Step | undefined} */
  let step;
  /** @type {number | undefined} */
  let previousAt;
  for (const item of items) {
    const message = item.kind === "message" ? item.message : undefined;
    if (item.kind === "message" && item.message.type === "tool_result" && item.call) {
      step = undefined;
      previousAt = timeOf(item.message.ts) ?? previousAt;
      continue;
    }
    if (item.kind === "message" && isModelMessage(item.message)) {
      if (!step) {
        step = { items: [], startedAfter: previousAt };
        nodes.push(step);
      }
      step.items.push(item);
    } else {
      step = undefined;
      nodes.push(safely(item.line, problems, () => renderItem(item)));
    }
    previousAt = (message && timeOf(message.ts)) ?? previousAt;
  }
  return nodes.map((node) => (node instanceof Node ? node : renderStep(node, turnRemoved, problems)));
}

/**
 * draw() or, when it throws, the entry at `line` shown as a problem, and listed.
 * @param {number} line
 * @param {Problem[]} problems
 * @param {() => HTMLElement} draw
 * @returns {HTMLElement}
 */
function safely(line, problems, draw) {
  try {
    return draw();
  } catch (error) {
    const message = "could not be drawn: " + errorText(error);
    problems.push({ line, message });
    return h(
      "div.problem-entry",
      { "data-line": line },
      h("span.note-label", null, "Line " + line + " " + message),
      lineLabel(line),
    );
  }
}

/** @param {Item} item */
function renderItem(item) {
  if (item.kind === "compaction") return renderCompaction(item);
  if (item.kind !== "message") return renderEntry(item);
  const message = item.message;
  const removed = item.removedBy ? ".removed" : "";
  if (message.role === "user" && typeof message.deliversTask === "string")
    return h(
      "div.msg.user.task-delivery" + removed,
      { "data-line": item.line, "data-task": message.deliversTask },
      h(
        "div.msg-label",
        null,
        "Background task outcome",
        h("code.task-id", null, message.deliversTask),
        lineLabel(item.line),
      ),
      Array.isArray(message.content) ? renderContent(message.content) : h("div.text", null, textOf(message.content)),
    );
  if (message.role === "user")
    return h(
      "div.msg.user" + removed,
      { "data-line": item.line },
      h("div.msg-label", null, "User", lineLabel(item.line)),
      Array.isArray(message.content) ? renderContent(message.content) : h("div.text", null, textOf(message.content)),
    );
  if (message.role === "system") {
    return h(
      "details.msg.system" + removed,
      { "data-key": "system-" + item.line, "data-line": item.line },
      h(
        "summary",
        null,
        h("span.msg-label", null, "System prompt"),
        h("span.preview", null, preview(message.content)),
        lineLabel(item.line),
      ),
      h("div.text", null, textOf(message.content)),
    );
  }
  if (isAbortMark(message))
    return h(
      "div.msg.abort" + removed,
      { "data-line": item.line },
      h("div.msg-label", null, "Aborted", lineLabel(item.line)),
      h("div.text", null, "The run was stopped here; nothing more came from the model."),
    );
  if (message.type === "tool_result") {
    return h(
      "div.tool.orphan.error",
      { "data-line": item.line },
      h(
        "div.tool-head",
        null,
        h("span.tool-status", null, "result without a call"),
        h("code.tool-id", null, textOf(message.id)),
        lineLabel(item.line),
      ),
      resultBody(message),
    );
  }
  return h(
    "div.note",
    { "data-line": item.line },
    h("span.note-label", null, "message " + kindOf(message)),
    lineLabel(item.line),
    h("pre.clip", null, pretty(message)),
  );
}

/**
 * An entry that is not a message (a `custom` entry such as the CLI's workspace record, or one of a
 * kind this page does not know): kept out of the way, its JSON a click away.
 * @param {EntryItem} item
 */
function renderEntry(item) {
  const entry = item.entry;
  const label = item.kind === "custom" ? "custom · " + textOf(entry.customType) : "entry " + kindOf(entry);
  const data = item.kind === "custom" ? entry.data : entry;
  const workspace =
    item.kind === "custom" && entry.customType === "workspace" && isObject(data) && typeof data.workspace === "string"
      ? data.workspace
      : undefined;
  return h(
    "details.note.entry" + (item.kind === "custom" ? ".custom" : ""),
    { "data-key": "entry-" + item.line, "data-line": item.line },
    h(
      "summary",
      null,
      h("span.note-label", null, workspace !== undefined ? "Workspace" : label),
      workspace !== undefined && h("code.preview", null, workspace),
      lineLabel(item.line),
    ),
    h("pre.clip", null, pretty(data ?? null)),
  );
}

/**
 * @param {Step} step
 * @param {boolean} turnRemoved
 * @param {Problem[]} problems
 * @returns {HTMLElement}
 */
function renderStep(step, turnRemoved, problems) {
  const first = step.items[0];
  const last = step.items[step.items.length - 1];
  if (first === undefined || last === undefined) return h("div.step", null);
  /** @type {JsonObject | undefined} */
  let usage;
  /** @type {string | undefined} */
  let stopReason;
  /** @type {string | undefined} */
  let model;
  for (const item of step.items) {
    if (isObject(item.message.usage)) usage = item.message.usage;
    if (typeof item.message.stopReason === "string") stopReason = item.message.stopReason;
    if (typeof item.message.model === "string") model = item.message.model;
  }
  const cost = callCost(model, usage);
  const at = timeOf(first.message.ts);
  const modelMs = at !== undefined && step.startedAfter !== undefined ? at - step.startedAfter : undefined;
  const removedBy = step.items.every((item) => item.removedBy) ? first.removedBy : undefined;
  const head = h(
    "div.step-head",
    null,
    h("span.step-label", null, "model"),
    model !== undefined && h("span.step-model", { title: "the model that answered" }, model),
    modelMs !== undefined &&
      h("span.step-time", { title: "from the message before to the model's answer" }, formatDuration(modelMs)),
    usage &&
      h(
        "span.usage",
        { title: usageTitle(usage) },
        formatCount(countOf(usage.inputTokens)) +
          " in · " +
          formatCount(countOf(usage.outputTokens)) +
          " out" +
          (countOf(usage.cacheReadTokens) ? " · " + formatCount(countOf(usage.cacheReadTokens)) + " cached" : ""),
      ),
    cost !== undefined && h("span.step-cost", { title: "at the prices the viewer was given" }, formatUsd(cost)),
    stopReason && h("span.stop" + (unusualStop(stopReason) ? ".unusual" : ""), { "data-stop": stopReason }, stopReason),
    removedBy &&
      !turnRemoved &&
      h(
        "span.badge.removed",
        { title: "removed from the session by the compaction at line " + removedBy.line },
        "compacted away",
      ),
    lineLabel(first.line, last.line),
  );
  return h(
    "div.step" + (removedBy ? ".removed" : ""),
    null,
    head,
    step.items.map((item) => safely(item.line, problems, () => renderModelMessage(item))),
  );
}

/** @param {JsonObject} usage */
function usageTitle(usage) {
  return Object.keys(usage)
    .map((key) => key + ": " + formatCount(countOf(usage[key])))
    .join("\n");
}

/** @param {MessageItem} item */
function renderModelMessage(item) {
  const message = item.message;
  const removed = item.removedBy ? ".removed" : "";
  if (message.type === "thinking") {
    const label = message.redacted === true ? "Thinking (redacted by the provider)" : "Thinking";
    const content = textOf(message.content);
    return h(
      "details.thinking" + removed,
      { "data-key": "thinking-" + item.line, "data-line": item.line },
      h(
        "summary",
        null,
        h("span.msg-label", null, label),
        h("span.preview", null, preview(message.content)),
        compactedBadge(message),
        h("span.chars", null, plural(content.length, "char")),
      ),
      h("div.text", null, content),
      original(item, (previous) => textOf(previous.content)),
    );
  }
  if (message.type === "tool_call") return renderToolCall(item);
  const aborted = message.stopReason === "aborted";
  const content = message.content;
  return h(
    "div.msg.assistant" + removed + (aborted ? ".aborted" : ""),
    { "data-line": item.line },
    h("div.msg-label", null, "Assistant", aborted && h("span.badge.aborted", null, "aborted")),
    content !== undefined && content !== ""
      ? h("div.text", null, textOf(content))
      : h("div.text.empty", null, aborted ? "The run was aborted before the model answered." : "(no text)"),
    message.output !== undefined &&
      h(
        "div.structured",
        null,
        h("div.io-label", null, "structured output (validated)"),
        h("pre.io-body", null, pretty(message.output)),
      ),
  );
}

/**
 * The states a call is drawn in, each with its status text; the state also names the call's class.
 * @type {ReadonlyMap<string, string>}
 */
const callStatus = new Map([
  ["ok", "✓"],
  ["error", "✗ error"],
  ["denied", "✗ denied"],
  ["pending", "awaiting approval"],
  ["open", "no result yet"],
]);

/** @param {MessageItem} item */
function renderToolCall(item) {
  const call = item.message;
  const result = item.result && item.result.message;
  const approval = isObject(call.approval) ? call.approval : undefined;
  const denial = denialOf(call, result);
  const state = denial
    ? "denied"
    : result
      ? result.isError === true
        ? "error"
        : "ok"
      : approval && approval.status === "pending"
        ? "pending"
        : "open";
  const callAt = timeOf(call.ts);
  const resultAt = result && timeOf(result.ts);
  const waitMs = waitOf(result);
  const runMs = callAt !== undefined && resultAt !== undefined ? Math.max(0, resultAt - callAt - waitMs) : undefined;
  const decided =
    approval && (approval.status === "approved" || approval.status === "denied") ? approval.status : undefined;
  return h(
    "div.tool." + state + (item.removedBy ? ".removed" : ""),
    { "data-line": item.line, "data-call": textOf(call.id) },
    h(
      "div.tool-head",
      null,
      h("span.tool-status", null, callStatus.get(state)),
      h("span.tool-name", null, textOf(call.name)),
      denial
        ? h(
            "span.badge.approval.denied.reason",
            null,
            denial.reason === "" ? "denied (no reason given)" : "denied: " + denial.reason,
          )
        : decided &&
            h(
              "span.badge.approval." + decided,
              null,
              decided + (approval && approval.reason !== undefined ? ": " + textOf(approval.reason) : ""),
            ),
      compactedBadge(call),
      call.heldResult !== undefined &&
        h("span.badge", { title: "answered while an earlier call waited for approval" }, "held result"),
      h(
        "span.tool-duration",
        { title: "from the call to its result, less any wait for approval" },
        formatDuration(runMs),
      ),
      waitMs > 0 &&
        h(
          "span.tool-wait",
          { title: "the call waited this long for a human's decision; not counted in run time" },
          "waited " + formatDuration(waitMs) + " for approval",
        ),
      h("code.tool-id", null, textOf(call.id)),
      lineLabel(item.line, item.result && item.result.line),
    ),
    h(
      "div.tool-io",
      null,
      renderInput(call),
      result
        ? h(
            "div.io.output",
            null,
            h("div.io-label", null, state === "denied" ? "denied" : result.isError === true ? "error" : "result"),
            resultBody(result),
          )
        : h(
            "div.io.output.none",
            null,
            h("div.io-label", null, "result"),
            h(
              "div.io-body",
              null,
              state !== "pending"
                ? "No result in the log yet."
                : approval && approval.nested
                  ? "A subagent inside this call waits for a human's decision on its calls below (resolveApproval with their ids)."
                  : "Waiting for a human's decision (resolveApproval).",
            ),
          ),
    ),
    approval && renderDecision(approval),
    result && isObject(result.task) && renderTask(result.task, item.delivered === true),
    result && item.result && renderProgramCalls(result, String(item.result.line)),
    !result && approval && renderNested(item, approval.nested),
    original(item, (previous) => pretty(previous.input)),
  );
}

/**
 * A call's input: an edit (a path, oldText and newText) as a diff, anything else as JSON.
 * @param {JsonObject} call
 */
function renderInput(call) {
  const input = call.input;
  if (
    call.name === "edit" &&
    isObject(input) &&
    typeof input.oldText === "string" &&
    typeof input.newText === "string"
  ) {
    return h(
      "div.io.input.edit",
      null,
      h("div.io-label", null, "edit", typeof input.path === "string" && h("code.edit-path", null, input.path)),
      renderEditDiff(input.oldText, input.newText),
    );
  }
  return h("div.io.input", null, h("div.io-label", null, "input"), h("pre.io-body", null, pretty(input)));
}

/**
 * The session of a subagent paused inside a call: the calls it waits on (ids to resolve), and the whole session a click away.
 * @param {MessageItem} item
 * @param {unknown} nested
 */
function renderNested(item, nested) {
  if (!isObject(nested) || !Array.isArray(nested.messages)) return null;
  const messages = nested.messages;
  const waiting = pendingNestedCalls(messages, 0);
  return h(
    "div.nested",
    null,
    h("div.io-label", null, "subagent paused · " + plural(waiting.length, "call") + " awaiting approval"),
    waiting.map((call) =>
      h(
        "div.nested-call",
        { "data-call": textOf(call.id) },
        h(
          "div.tool-head",
          null,
          h("span.tool-status", null, "awaiting approval"),
          h("span.tool-name", null, textOf(call.name)),
          h("code.tool-id", null, textOf(call.id)),
        ),
        h("pre.io-body", null, pretty(call.input)),
      ),
    ),
    h(
      "details.nested-session",
      { "data-key": "nested-" + item.line },
      h("summary", null, "Subagent session · " + plural(messages.length, "message")),
      h("pre.io-body", null, pretty(messages)),
    ),
  );
}

/**
 * Calls of a paused session still waiting for a decision, through subagents paused inside them
 * (as deep as a log may nest them, but no deeper than the page can follow).
 * @param {readonly unknown[]} messages
 * @param {number} depth
 * @returns {JsonObject[]}
 */
function pendingNestedCalls(messages, depth) {
  const objects = messages.filter(isObject);
  const answered = new Set(objects.filter((message) => message.type === "tool_result").map((message) => message.id));
  return objects.flatMap((message) => {
    const approval = message.approval;
    if (
      message.type !== "tool_call" ||
      answered.has(message.id) ||
      !isObject(approval) ||
      approval.status !== "pending"
    )
      return [];
    const inner = approval.nested;
    return isObject(inner) && Array.isArray(inner.messages) && depth < 50
      ? pendingNestedCalls(inner.messages, depth + 1)
      : [message];
  });
}

/** @param {CompactionItem} item */
function renderCompaction(item) {
  const details = isObject(item.entry.details) ? item.entry.details : {};
  const strategy = typeof details.strategy === "string" ? details.strategy : item.entry.reason;
  const tokens =
    typeof details.tokensBefore === "number" && typeof details.tokensAfter === "number"
      ? "~" + formatCount(details.tokensBefore) + " → ~" + formatCount(details.tokensAfter) + " tokens"
      : undefined;
  const summary = typeof details.summary === "string" ? details.summary : undefined;
  // The inserted summary message repeats the summary: show it only when there is no summary field.
  const inserted = summary === undefined ? item.inserted : [];
  return h(
    "div.compaction",
    { "data-line": item.line },
    h(
      "div.compaction-head",
      null,
      h("span.compaction-label", null, "⟲ Compaction"),
      strategy !== undefined && strategy !== null && h("span.badge", null, textOf(strategy)),
      h(
        "span",
        null,
        plural(item.removed.length, "message") +
          " removed" +
          (item.inserted.length ? ", " + item.inserted.length + " inserted" : ""),
      ),
      tokens && h("span.compaction-tokens", null, tokens),
      h("span.turn-time", null, formatClock(timeOf(item.entry.ts))),
      lineLabel(item.line),
    ),
    summary !== undefined && h("div.text.summary", null, summary),
    inserted.map((inner) => h("div.text.summary", null, pretty(inner.message.content ?? inner.message))),
  );
}

/** @param {JsonObject} message */
function compactedBadge(message) {
  return (
    message.compacted === true &&
    h("span.badge.compacted", { title: "shortened by compaction; the original is in the log" }, "compacted")
  );
}

/**
 * @param {MessageItem} item
 * @param {(previous: JsonObject) => string} show
 */
function original(item, show) {
  if (item.original === undefined) return null;
  return h(
    "details.original",
    { "data-key": "original-" + item.line },
    h("summary", null, "Before compaction"),
    h("pre.io-body", null, show(item.original)),
  );
}

/**
 * A value meant to be text, as text: a string as it is; anything else (listed as a problem when
 * the log was read) as its JSON.
 * @param {unknown} value
 * @returns {string}
 */
export function textOf(value) {
  return typeof value === "string" ? value : value === undefined ? "" : pretty(value);
}

/**
 * A tool result's body: its content parts where it has them (images, files), else its output.
 * @param {JsonObject} result
 */
function resultBody(result) {
  return Array.isArray(result.content)
    ? h("div.parts-body", null, renderContent(result.content))
    : h("pre.io-body", null, pretty(result.output));
}

/**
 * A message's or entry's kind, as named in the log.
 * @param {JsonObject} value
 */
function kindOf(value) {
  const kind = value.role ?? value.type;
  return typeof kind === "string" ? JSON.stringify(kind) : describe(kind);
}

/** @param {unknown} value */
function countOf(value) {
  return isCount(value) ? value : 0;
}

/** @param {unknown} value */
function preview(value) {
  // Only the start is looked at: the text may be megabytes.
  const line = textOf(value ?? "")
    .slice(0, 400)
    .replace(/\s+/g, " ")
    .trim();
  return line.length > 120 ? line.slice(0, 120) + "…" : line;
}

/**
 * @param {number} line
 * @param {number} [last]
 */
function lineLabel(line, last) {
  return h(
    "span.line",
    { title: "line in the log file" },
    "L" + line + (last !== undefined && last !== line ? "–" + last : ""),
  );
}
