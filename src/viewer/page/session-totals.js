// @ts-check
/**
 * `/assets/session-totals.js`: the session's totals above the chart, summed from the turns' stats
 * (a turn not drawn yet has none, and counts for nothing until it is).
 */
import { contextOf } from "./context-usage.js";
import { h, fill, formatCount, formatDuration, formatTokens, plural } from "./dom.js";
import { formatUsd, hasPrices } from "./model-cost.js";

/** @typedef {import("./timeline.js").Timeline} Timeline */
/** @typedef {import("./timeline.js").Turn} Turn */

/**
 * @param {HTMLElement} container
 * @param {Timeline} timeline
 */
export function renderTotals(container, timeline) {
  const sums = sumStats(timeline.turns);
  fill(
    container,
    total("turns", formatCount(timeline.turns.filter((turn) => turn.number > 0).length)),
    total("messages", formatCount(timeline.live.length), undefined, "messages"),
    total("model calls", formatCount(sums.modelCalls)),
    total("tool calls", formatCount(sums.toolCalls), [
      sums.errors > 0 && h("span.flag.error", null, plural(sums.errors, "error")),
      sums.denied > 0 && h("span.flag.denied", null, sums.denied + " denied"),
    ]),
    total("input tokens", formatTokens(sums.input), undefined, "input"),
    total("output tokens", formatTokens(sums.output), undefined, "output"),
    sums.cached > 0 && total("cached input", formatTokens(sums.cached)),
    // The turns' run times, as the chart sums them: neither the time calls waited for a human's
    // decision (shown apart) nor the time between turns counts.
    total("run time", sums.runTime === undefined ? "–" : formatDuration(sums.runTime), undefined, "time"),
    sums.waited > 0 && total("waited for approval", formatDuration(sums.waited), undefined, "waited"),
    sums.pending > 0 && total("awaiting approval", formatCount(sums.pending), undefined, "pending"),
    hasPrices() && total("cost", sums.costUsd === undefined ? "–" : formatUsd(sums.costUsd), undefined, "cost"),
  );
}

/**
 * The session's estimated context as it is now, with a bar per part.
 * @param {HTMLElement} container
 * @param {Timeline} timeline
 */
export function renderContext(container, timeline) {
  const { total: tokens, parts } = contextOf(timeline.context);
  const bars = parts
    .filter((part) => part.tokens > 0)
    .map((part) => {
      const bar = h("span.context-bar", null);
      // Through the CSSOM: the page's policy refuses style attributes.
      bar.style.width = Math.max(1, Math.round((100 * part.tokens) / tokens)) + "%";
      return h(
        "div.context-part",
        { "data-part": part.name, "data-tokens": String(part.tokens) },
        h("span.context-name", null, part.name),
        h("span.context-track", null, bar),
        h("span.context-tokens", null, "~" + formatTokens(part.tokens)),
      );
    });
  fill(
    container,
    h(
      "div.context-total",
      {
        title: "estimated as the library's contextUsage does (the tools sent are not in the log)",
        "data-tokens": String(tokens),
      },
      h("span.total-value", null, "~" + formatTokens(tokens)),
      h("span.total-label", null, "tokens of context now"),
    ),
    h("div.context-parts", null, bars),
  );
}

/**
 * The turns' stats added up. `runTime`: the user turns' durations, undefined while none has one.
 * @param {readonly Turn[]} turns
 */
function sumStats(turns) {
  const sums = {
    input: 0,
    output: 0,
    cached: 0,
    modelCalls: 0,
    toolCalls: 0,
    errors: 0,
    denied: 0,
    pending: 0,
    waited: 0,
    runTime: /** @type {number | undefined} */ (undefined),
    costUsd: /** @type {number | undefined} */ (undefined),
  };
  for (const turn of turns) {
    const stats = turn.stats;
    if (stats === undefined) continue;
    sums.input += stats.inputTokens;
    sums.output += stats.outputTokens;
    sums.cached += stats.cacheReadTokens;
    sums.modelCalls += stats.modelCalls;
    sums.toolCalls += stats.toolCalls;
    sums.errors += stats.errors;
    sums.denied += stats.denied;
    sums.pending += stats.pending;
    sums.waited += stats.waitMs;
    if (stats.costUsd !== undefined) sums.costUsd = (sums.costUsd ?? 0) + stats.costUsd;
    if (turn.number > 0 && stats.durationMs !== undefined) sums.runTime = (sums.runTime ?? 0) + stats.durationMs;
  }
  return sums;
}

/**
 * @param {string} label
 * @param {string} value
 * @param {import("./dom.js").Child} [extra]
 * @param {string} [className]
 */
function total(label, value, extra, className) {
  return h(
    "div.total" + (className ? "." + className : ""),
    null,
    h("span.total-value", null, value),
    h("span.total-label", null, label),
    extra,
  );
}
