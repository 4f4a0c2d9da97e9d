import type { ContextUsage } from "../loop/context-usage.ts";
import type { Style } from "./ansi.ts";
import { visibleLine } from "./visible-text.ts";

/**
 * `/context`: where the session's context goes, one row per part with its estimated tokens, its
 * share of the total and a bar of that share; under `tools` and `tool_results` their largest
 * items (tool names come from the model and the servers: escaped). Ends with the total, and what
 * the provider reported for the last call when it did.
 */
export function formatContextTable(usage: ContextUsage, style: Style, contextWindow?: number): string {
  const rows: string[] = [];
  const total = Math.max(usage.total, 1);
  for (const part of usage.parts) {
    rows.push(row(part.name, part.tokens, total, style));
    for (const item of (part.items ?? []).slice(0, itemsShown))
      rows.push(style.dim(row(`  ${visibleLine(item.name)}`, item.tokens, total, style, "")));
    const hidden = (part.items?.length ?? 0) - itemsShown;
    if (hidden > 0) rows.push(style.dim(`  … ${hidden} more`));
  }
  const window =
    contextWindow === undefined ? "" : ` of ${format(contextWindow)} (${percent(usage.total, contextWindow)})`;
  rows.push(style.bold(`${"total".padEnd(nameWidth)} ${format(usage.total).padStart(9)} tokens (estimated)${window}`));
  if (usage.lastInputTokens !== undefined)
    rows.push(
      style.dim(
        `${"last call".padEnd(nameWidth)} ${format(usage.lastInputTokens).padStart(9)} input tokens (reported)`,
      ),
    );
  return `${rows.join("\n")}\n`;
}

const nameWidth = 22;
const barWidth = 24;
const itemsShown = 5;

function row(name: string, tokens: number, total: number, style: Style, barStyle = "cyan"): string {
  const share = tokens / total;
  const filled = Math.round(share * barWidth);
  const bar = "█".repeat(filled) + "·".repeat(barWidth - filled);
  const shown = name.length > nameWidth ? `${name.slice(0, nameWidth - 1)}…` : name.padEnd(nameWidth);
  return `${shown} ${format(tokens).padStart(9)} ${percent(tokens, total).padStart(4)} ${barStyle === "" ? bar : style.cyan(bar)}`;
}

function format(count: number): string {
  return count.toLocaleString("en-US");
}

function percent(part: number, whole: number): string {
  return `${Math.round((part / Math.max(whole, 1)) * 100)}%`;
}
