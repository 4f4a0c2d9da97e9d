// @ts-check
/**
 * `/assets/chart.js`: tokens and time per turn as an inline SVG. Three aligned rows (input tokens,
 * output tokens, run time), each on its own scale, so a turn's small output is not flattened by a
 * large prompt. Each turn is one `<g class="turn-bars">` holding its bars; clicking it calls `onSelect`.
 */
import { formatCount, formatDuration, formatTokens } from "./dom.js";

const svgNamespace = "http://www.w3.org/2000/svg";

/** @typedef {import("./turn-stats.js").TurnStats} TurnStats */
/** @typedef {{ key: "inputTokens" | "outputTokens" | "durationMs", label: string, format: (value: number) => string, title: (value: number) => string }} Row */

/**
 * The time row is run time: the time calls waited for a human's decision is not in it.
 * @type {readonly Row[]}
 */
const rows = [
  {
    key: "inputTokens",
    label: "Input tokens",
    format: formatTokens,
    title: (value) => formatCount(value) + " input tokens",
  },
  {
    key: "outputTokens",
    label: "Output tokens",
    format: formatTokens,
    title: (value) => formatCount(value) + " output tokens",
  },
  {
    key: "durationMs",
    label: "Run time",
    format: formatDuration,
    title: (value) => formatDuration(value) + " run time",
  },
];

/**
 * Replaces the container's content with the chart of `turns`, in order.
 * @param {HTMLElement} container
 * @param {readonly { number: number, stats: TurnStats }[]} turns
 * @param {(turnNumber: number) => void} onSelect
 */
export function renderChart(container, turns, onSelect) {
  const width = Math.max(320, container.clientWidth);
  const labelWidth = 150;
  const rowHeight = 46;
  const rowGap = 12;
  const axisHeight = 18;
  const height = rows.length * (rowHeight + rowGap) + axisHeight;
  const plotWidth = width - labelWidth - 8;
  const slot = turns.length > 0 ? plotWidth / turns.length : plotWidth;
  const barWidth = Math.max(1, Math.min(28, slot * (slot > 6 ? 0.7 : 1)));
  const chart = svg("svg", {
    width,
    height,
    viewBox: "0 0 " + width + " " + height,
    role: "img",
    "aria-label": "Tokens and time per turn",
  });

  const scales = rows.map((row, index) => {
    const values = turns.map((turn) => turn.stats[row.key] ?? 0);
    return {
      row,
      top: index * (rowHeight + rowGap),
      max: values.reduce((max, value) => Math.max(max, value), 0),
      total: values.reduce((sum, value) => sum + value, 0),
    };
  });
  for (const { row, top, max, total } of scales) {
    chart.append(
      svg("rect", { class: "swatch " + row.key, x: 0, y: top + 6, width: 10, height: 10, rx: 2 }),
      text(row.label, { class: "row-label", x: 16, y: top + 15 }),
      text("total " + row.format(total), { class: "row-value", x: 16, y: top + 31 }),
      text("max " + row.format(max), { class: "row-value", x: 16, y: top + 45 }),
      svg("line", {
        class: "baseline",
        x1: labelWidth,
        x2: labelWidth + plotWidth,
        y1: top + rowHeight + 0.5,
        y2: top + rowHeight + 0.5,
      }),
    );
  }

  turns.forEach((turn, index) => {
    const x = labelWidth + index * slot + (slot - barWidth) / 2;
    const group = svg("g", { class: "turn-bars", "data-turn": turn.number });
    group.append(
      svg("rect", { class: "hit", x: labelWidth + index * slot, y: 0, width: slot, height: height - axisHeight }),
    );
    for (const { row, top, max } of scales) {
      const value = turn.stats[row.key] ?? 0;
      const barHeight = value > 0 && max > 0 ? Math.max(1.5, (value / max) * rowHeight) : 0;
      group.append(
        svg("rect", { class: "bar " + row.key, x, y: top + rowHeight - barHeight, width: barWidth, height: barHeight }),
      );
    }
    const title = svg("title", {});
    title.textContent =
      "Turn " +
      turn.number +
      "\n" +
      rows.map((row) => row.title(turn.stats[row.key] ?? 0)).join("\n") +
      (turn.stats.waitMs > 0
        ? "\nwaited " + formatDuration(turn.stats.waitMs) + " for approval (not in run time)"
        : "");
    group.append(title);
    group.addEventListener("click", () => onSelect(turn.number));
    chart.append(group);
  });

  // Turn numbers under the bars, as many as fit.
  const every = Math.max(1, Math.ceil(28 / slot));
  turns.forEach((turn, index) => {
    if (index % every === 0)
      chart.append(
        text(String(turn.number), {
          class: "axis",
          x: labelWidth + (index + 0.5) * slot,
          y: height - 4,
          "text-anchor": "middle",
        }),
      );
  });
  if (turns.length === 0)
    chart.append(text("No turns yet", { class: "row-value", x: labelWidth + 8, y: rowHeight / 2 }));
  container.replaceChildren(chart);
}

/**
 * @param {string} name
 * @param {{ [name: string]: string | number }} attributes
 */
function svg(name, attributes) {
  const node = document.createElementNS(svgNamespace, name);
  for (const key of Object.keys(attributes)) node.setAttribute(key, String(attributes[key]));
  return node;
}

/**
 * @param {string} content
 * @param {{ [name: string]: string | number }} attributes
 */
function text(content, attributes) {
  const node = svg("text", attributes);
  node.textContent = content;
  return node;
}
