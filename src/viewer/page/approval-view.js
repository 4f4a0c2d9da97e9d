// @ts-check
/**
 * `/assets/approval-view.js`: who decided a tool call and why (`approval.decidedBy`), and the links
 * of the approval chain asked before it that were not sure (`approval.consulted`): a rule's id and
 * action, a classifier's verdict with its reason and what asking it cost, a human's id.
 *
 * Every field is untrusted JSON: a link of a kind this page does not know is shown as its JSON.
 */
import { h, formatClock, formatCount, pretty, timeOf } from "./dom.js";
import { isCount, isObject } from "./entry-check.js";
import { formatUsd } from "./model-cost.js";

/** @typedef {import("./entry-check.js").JsonObject} JsonObject */

/**
 * The decision of a call's `approval`, or null when nothing decided it yet (pending, or a record
 * from before the approval chain, with no `decidedBy`).
 * @param {JsonObject} approval
 * @returns {HTMLElement | null}
 */
export function renderDecision(approval) {
  const decidedBy = approval.decidedBy;
  const consulted = Array.isArray(approval.consulted) ? approval.consulted : [];
  if (decidedBy === undefined && consulted.length === 0) return null;
  const at = timeOf(approval.at);
  return h(
    "div.decision",
    null,
    decidedBy !== undefined &&
      h(
        "div.decided-by",
        null,
        h("span.decision-label", null, "decided by"),
        renderLink(decidedBy),
        at !== undefined && h("span.decision-at", { title: String(approval.at) }, formatClock(at)),
      ),
    consulted.length > 0 &&
      h(
        "div.consulted",
        null,
        h("span.decision-label", null, "asked first"),
        h(
          "ol.consulted-links",
          null,
          consulted.map((link) => h("li", null, renderLink(link))),
        ),
      ),
  );
}

/**
 * One link of the chain: who it is, what it said, why, and what asking it cost.
 * @param {unknown} link
 */
function renderLink(link) {
  if (!isObject(link) || typeof link.by !== "string")
    return h("span.link.unknown", null, h("code", null, pretty(link ?? null)));
  const by = link.by;
  return h(
    "span.link",
    { "data-by": knownBy.has(by) ? by : "other" },
    h("span.link-who", null, whoOf(link)),
    verdictOf(link),
    typeof link.reason === "string" && link.reason !== "" && h("span.link-reason", null, link.reason),
    typeof link.error === "string" && h("span.link-error", null, "error: " + link.error),
    costOf(link),
  );
}

const knownBy = new Set(["rule", "classifier", "human", "hook", "policy"]);

/** @param {JsonObject} link */
function whoOf(link) {
  switch (link.by) {
    case "rule":
      return ["rule ", h("code.link-name", null, text(link.rule))];
    case "classifier":
      return ["classifier ", h("code.link-name", null, text(link.name))];
    case "human":
      return typeof link.user === "string" ? ["human ", h("code.link-name", null, link.user)] : "a human";
    case "hook":
      return "the beforeToolCall hook";
    case "policy":
      return "the policy (no one to ask)";
    default:
      return text(link.by);
  }
}

/** @param {JsonObject} link */
function verdictOf(link) {
  const said = link.by === "rule" ? link.action : link.by === "classifier" ? link.decision : undefined;
  if (said === undefined) return null;
  const word = text(said);
  return h(
    "span.link-verdict" + (word === "allow" ? ".allow" : word === "deny" ? ".deny" : ".unsure"),
    null,
    word,
    isFraction(link.confidence) && " (" + Math.round(link.confidence * 100) + "% sure)",
  );
}

/**
 * A classifier's model, tokens and cost, when it recorded them.
 * @param {JsonObject} link
 */
function costOf(link) {
  const usage = isObject(link.usage) ? link.usage : undefined;
  const parts = [
    typeof link.model === "string" && link.model,
    usage &&
      formatCount(isCount(usage.inputTokens) ? usage.inputTokens : 0) +
        " in · " +
        formatCount(isCount(usage.outputTokens) ? usage.outputTokens : 0) +
        " out",
    typeof link.costUsd === "number" && Number.isFinite(link.costUsd) && formatUsd(link.costUsd),
  ].filter((part) => typeof part === "string");
  return parts.length > 0 && h("span.link-cost", { title: "what asking it cost" }, parts.join(" · "));
}

/**
 * @param {unknown} value
 * @returns {value is number}
 */
function isFraction(value) {
  return typeof value === "number" && value >= 0 && value <= 1;
}

/** @param {unknown} value */
function text(value) {
  return value === undefined ? "" : pretty(value);
}
