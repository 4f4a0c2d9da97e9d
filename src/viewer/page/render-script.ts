/**
 * `/assets/render.js`: one turn of the timeline as DOM. Each model call is a "step" (its thinking,
 * text and tool calls, each call with its result); every `<details>` has a `data-key` so the page
 * can keep what the reader opened when a live update redraws the turn.
 */
export const renderScript = String.raw`
import { h, formatCount, formatTokens, formatDuration, formatClock, formatDateTime, timeOf, pretty, plural } from "./dom.js";
import { isModelMessage } from "./timeline.js";

export function renderTurn(turn, stats) {
  if (turn.number === 0) return h("section.turn-zero", { "data-turn": 0 }, renderItems(turn.items));
  const userItem = turn.items[0];
  return h("section.turn" + (stats.removed ? ".removed" : ""), { id: "turn-" + turn.number, "data-turn": turn.number },
    h("header.turn-head",
      h("a.turn-number", { href: "#turn-" + turn.number }, "Turn " + turn.number),
      h("span.turn-time", { title: formatDateTime(stats.start) }, formatClock(stats.start)),
      h("span.turn-meta", turnMeta(stats)),
      h("span.flags", turnFlags(stats, userItem))),
    h("div.turn-body", renderItems(turn.items, stats.removed)));
}

function turnMeta(stats) {
  const parts = [formatDuration(stats.durationMs), stats.modelCalls > 0 && plural(stats.modelCalls, "model call"), stats.toolCalls > 0 && plural(stats.toolCalls, "tool call")];
  if (stats.inputTokens || stats.outputTokens) parts.push(formatTokens(stats.inputTokens) + " in · " + formatTokens(stats.outputTokens) + " out");
  return parts.filter(Boolean).join(" · ");
}

function turnFlags(stats, userItem) {
  return [
    stats.errors > 0 && h("span.flag.error", plural(stats.errors, "error")),
    stats.pending > 0 && h("span.flag.pending", stats.pending + " awaiting approval"),
    stats.aborted && h("span.flag.aborted", "aborted"),
    unusualStop(stats.stopReason) && !stats.aborted && h("span.flag.stop", stats.stopReason),
    userItem.removedBy && h("span.flag.removed", { title: "a compaction at line " + userItem.removedBy.line + " removed this turn from the session" }, "compacted away"),
  ];
}

function unusualStop(reason) {
  return typeof reason === "string" && reason !== "end_turn" && reason !== "tool_use";
}

/**
 * Items in order; runs of model messages become steps, a tool result is drawn with its call.
 * turnRemoved: the turn's header already says compaction removed it, so its steps do not.
 */
function renderItems(items, turnRemoved) {
  const nodes = [];
  let step;
  let previousAt;
  for (const item of items) {
    const message = item.kind === "message" ? item.message : undefined;
    if (message && message.type === "tool_result" && item.call) {
      step = undefined;
      previousAt = timeOf(message.ts) ?? previousAt;
      continue;
    }
    if (message && isModelMessage(message)) {
      if (!step) {
        step = { items: [], startedAfter: previousAt };
        nodes.push(step);
      }
      step.items.push(item);
    } else {
      step = undefined;
      nodes.push(renderItem(item));
    }
    previousAt = (message && timeOf(message.ts)) ?? previousAt;
  }
  return nodes.map((node) => (node instanceof Node ? node : renderStep(node, turnRemoved)));
}

function renderItem(item) {
  if (item.kind === "compaction") return renderCompaction(item);
  if (item.kind === "custom") return h("div.note.custom", { "data-line": item.line }, h("span.note-label", "custom · " + String(item.entry.customType)), lineLabel(item.line), h("pre.clip", pretty(item.entry.data ?? null)));
  if (item.kind === "other") return h("div.note", { "data-line": item.line }, h("span.note-label", "entry " + JSON.stringify(item.entry.type)), lineLabel(item.line), h("pre.clip", pretty(item.entry)));
  const message = item.message;
  const removed = item.removedBy ? ".removed" : "";
  if (message.role === "user") return h("div.msg.user" + removed, { "data-line": item.line }, h("div.msg-label", "User", lineLabel(item.line)), h("div.text", message.content));
  if (message.role === "system") {
    return h("details.msg.system" + removed, { "data-key": "system-" + item.line, "data-line": item.line },
      h("summary", h("span.msg-label", "System prompt"), h("span.preview", preview(message.content)), lineLabel(item.line)),
      h("div.text", message.content));
  }
  if (message.type === "tool_result") {
    return h("div.tool.orphan.error", { "data-line": item.line }, h("div.tool-head", h("span.tool-status", "result without a call"), h("code.tool-id", String(message.id)), lineLabel(item.line)),
      h("pre.io-body", pretty(message.output)));
  }
  return h("div.note", { "data-line": item.line }, h("span.note-label", "message " + JSON.stringify(message.role ?? message.type)), lineLabel(item.line), h("pre.clip", pretty(message)));
}

function renderStep(step, turnRemoved) {
  const first = step.items[0];
  const last = step.items[step.items.length - 1];
  let usage;
  let stopReason;
  for (const item of step.items) {
    if (item.message.usage) usage = item.message.usage;
    if (typeof item.message.stopReason === "string") stopReason = item.message.stopReason;
  }
  const at = timeOf(first.message.ts);
  const modelMs = at !== undefined && step.startedAfter !== undefined ? at - step.startedAfter : undefined;
  const removedBy = step.items.every((item) => item.removedBy) ? first.removedBy : undefined;
  const head = h("div.step-head",
    h("span.step-label", "model"),
    modelMs !== undefined && h("span.step-time", { title: "from the message before to the model's answer" }, formatDuration(modelMs)),
    usage && h("span.usage", { title: usageTitle(usage) }, formatCount(usage.inputTokens || 0) + " in · " + formatCount(usage.outputTokens || 0) + " out" +
      (usage.cacheReadTokens ? " · " + formatCount(usage.cacheReadTokens) + " cached" : "")),
    stopReason && h("span.stop" + (unusualStop(stopReason) ? ".unusual" : ""), { "data-stop": stopReason }, stopReason),
    removedBy && !turnRemoved && h("span.badge.removed", { title: "removed from the session by the compaction at line " + removedBy.line }, "compacted away"),
    lineLabel(first.line, last.line));
  return h("div.step" + (removedBy ? ".removed" : ""), null, head, step.items.map(renderModelMessage));
}

function usageTitle(usage) {
  return Object.keys(usage).map((key) => key + ": " + formatCount(Number(usage[key]) || 0)).join("\n");
}

function renderModelMessage(item) {
  const message = item.message;
  const removed = item.removedBy ? ".removed" : "";
  if (message.type === "thinking") {
    const label = message.redacted ? "Thinking (redacted by the provider)" : "Thinking";
    return h("details.thinking" + removed, { "data-key": "thinking-" + item.line, "data-line": item.line },
      h("summary", h("span.msg-label", label), h("span.preview", preview(message.content)), compactedBadge(message), h("span.chars", plural(message.content.length, "char"))),
      h("div.text", message.content),
      original(item, (previous) => previous.content));
  }
  if (message.type === "tool_call") return renderToolCall(item);
  const aborted = message.stopReason === "aborted";
  return h("div.msg.assistant" + removed + (aborted ? ".aborted" : ""), { "data-line": item.line },
    h("div.msg-label", "Assistant", aborted && h("span.badge.aborted", "aborted")),
    message.content ? h("div.text", message.content) : h("div.text.empty", aborted ? "The run was aborted before the model answered." : "(no text)"),
    message.output !== undefined && h("div.structured", h("div.io-label", "structured output (validated)"), h("pre.io-body", pretty(message.output))));
}

function renderToolCall(item) {
  const call = item.message;
  const result = item.result && item.result.message;
  const approval = call.approval && typeof call.approval === "object" ? call.approval : undefined;
  const state = result ? (result.isError === true ? "error" : "ok") : approval && approval.status === "pending" ? "pending" : "open";
  const status = { ok: "✓", error: "✗ error", pending: "awaiting approval", open: "no result yet" }[state];
  const callAt = timeOf(call.ts);
  const resultAt = result && timeOf(result.ts);
  const duration = callAt !== undefined && resultAt !== undefined ? formatDuration(resultAt - callAt) : "";
  return h("div.tool." + state + (item.removedBy ? ".removed" : ""), { "data-line": item.line, "data-call": call.id },
    h("div.tool-head",
      h("span.tool-status", status),
      h("span.tool-name", String(call.name)),
      approval && approval.status !== "pending" && h("span.badge.approval." + approval.status, approval.status + (approval.reason ? ": " + approval.reason : "")),
      compactedBadge(call),
      call.heldResult && h("span.badge", { title: "answered while an earlier call waited for approval" }, "held result"),
      h("span.tool-duration", { title: "from the call to its result" }, duration),
      h("code.tool-id", String(call.id)),
      lineLabel(item.line, item.result && item.result.line)),
    h("div.tool-io",
      h("div.io.input", h("div.io-label", "input"), h("pre.io-body", pretty(call.input))),
      result
        ? h("div.io.output", h("div.io-label", result.isError === true ? "error" : "result"), h("pre.io-body", pretty(result.output)))
        : h("div.io.output.none", h("div.io-label", "result"), h("div.io-body", state !== "pending" ? "No result in the log yet." : approval.nested ? "A subagent inside this call waits for a human's decision on its calls below (resolveApproval with their ids)." : "Waiting for a human's decision (resolveApproval)."))),
    !result && approval && renderNested(item, approval.nested),
    original(item, (previous) => pretty(previous.input)));
}

/** The session of a subagent paused inside a call: the calls it waits on (ids to resolve), and the whole session a click away. */
function renderNested(item, nested) {
  if (!nested || typeof nested !== "object" || !Array.isArray(nested.messages)) return null;
  const waiting = pendingNestedCalls(nested.messages);
  return h("div.nested",
    h("div.io-label", "subagent paused · " + plural(waiting.length, "call") + " awaiting approval"),
    waiting.map((call) => h("div.nested-call", { "data-call": String(call.id) },
      h("div.tool-head", h("span.tool-status", "awaiting approval"), h("span.tool-name", String(call.name)), h("code.tool-id", String(call.id))),
      h("pre.io-body", pretty(call.input)))),
    h("details.nested-session", { "data-key": "nested-" + item.line },
      h("summary", "Subagent session · " + plural(nested.messages.length, "message")),
      h("pre.io-body", pretty(nested.messages))));
}

// Calls of a paused session still waiting for a decision, through subagents paused inside them.
function pendingNestedCalls(messages) {
  const answered = new Set(messages.filter((message) => message && message.type === "tool_result").map((message) => message.id));
  return messages.flatMap((message) => {
    if (!message || message.type !== "tool_call" || answered.has(message.id) || !message.approval || message.approval.status !== "pending") return [];
    const inner = message.approval.nested;
    return inner && Array.isArray(inner.messages) ? pendingNestedCalls(inner.messages) : [message];
  });
}

function renderCompaction(item) {
  const details = item.entry.details && typeof item.entry.details === "object" ? item.entry.details : {};
  const strategy = typeof details.strategy === "string" ? details.strategy : item.entry.reason;
  const tokens = typeof details.tokensBefore === "number" && typeof details.tokensAfter === "number"
    ? "~" + formatCount(details.tokensBefore) + " → ~" + formatCount(details.tokensAfter) + " tokens" : undefined;
  const summary = typeof details.summary === "string" ? details.summary : undefined;
  // The inserted summary message repeats the summary: show it only when there is no summary field.
  const inserted = summary === undefined ? item.inserted : [];
  return h("div.compaction", { "data-line": item.line },
    h("div.compaction-head", h("span.compaction-label", "⟲ Compaction"), strategy && h("span.badge", String(strategy)),
      h("span", plural(item.removed.length, "message") + " removed" + (item.inserted.length ? ", " + item.inserted.length + " inserted" : "")),
      tokens && h("span.compaction-tokens", tokens), h("span.turn-time", formatClock(timeOf(item.entry.ts))), lineLabel(item.line)),
    summary !== undefined && h("div.text.summary", summary),
    inserted.map((inner) => h("div.text.summary", pretty(inner.message.content ?? inner.message))));
}

function compactedBadge(message) {
  return message.compacted === true && h("span.badge.compacted", { title: "shortened by compaction; the original is in the log" }, "compacted");
}

function original(item, show) {
  if (item.original === undefined) return null;
  return h("details.original", { "data-key": "original-" + item.line }, h("summary", "Before compaction"), h("pre.io-body", show(item.original)));
}

function preview(text) {
  const line = String(text ?? "").replace(/\s+/g, " ").trim();
  return line.length > 120 ? line.slice(0, 120) + "…" : line;
}

function lineLabel(line, last) {
  return h("span.line", { title: "line in the log file" }, "L" + line + (last !== undefined && last !== line ? "–" + last : ""));
}
`;
