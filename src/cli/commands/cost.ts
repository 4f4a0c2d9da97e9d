import { priceOf } from "../../model/cost.ts";
import { sessionMetrics } from "../../loop/metrics.ts";
import { modelPricesDate } from "../../prices/index.ts";
import { visibleLine } from "../visible-text.ts";
import { goOn, type SlashCommand } from "./slash-command.ts";

/**
 * `/cost`: the session's tokens so far and, for the models with a known price, what they cost
 * (`sessionMetrics` with the CLI's prices); the models without one are named. With `--max-cost`,
 * what this run spent of it.
 */
export const costCommand: SlashCommand = {
  name: "cost",
  summary: "tokens and cost of the session so far",
  run: async (_argument, { task, sessions, out, style }) => {
    const session = sessions.current().stored();
    const metrics = sessionMetrics(session ?? { messages: [] }, { prices: task.prices ?? {} });
    const { usage } = metrics;
    const number = (value: number): string => value.toLocaleString("en-US");
    const cache =
      usage.cacheReadTokens > 0 || usage.cacheWriteTokens > 0
        ? ` (cache: ${number(usage.cacheReadTokens)} read, ${number(usage.cacheWriteTokens)} written)`
        : "";
    const lines = [
      `tokens ${number(usage.inputTokens)} in${cache} · ${number(usage.outputTokens)} out · ${metrics.modelCalls} model ${metrics.modelCalls === 1 ? "call" : "calls"}`,
    ];
    const byModel = Object.entries(metrics.costByModel ?? {});
    const priced = byModel.filter(([model]) => priceOf(task.prices ?? {}, model) !== undefined);
    const unpriced = byModel.filter((entry) => !priced.includes(entry));
    if (priced.length > 0)
      lines.push(
        `cost ${dollars(priced.reduce((sum, [, entry]) => sum + entry.costUsd, 0))} (${priced
          .map(
            ([model, entry]) =>
              `${visibleLine(model)}: ${dollars(entry.costUsd)}, ${entry.calls} ${entry.calls === 1 ? "call" : "calls"}`,
          )
          .join("; ")}) ${style.dim(`at list prices of ${modelPricesDate}`)}`,
      );
    const unknown = metrics.turns.filter((turn) => turn.model === undefined).length;
    const noPrice = [
      ...unpriced.map(
        ([model, entry]) => `${visibleLine(model)} (${entry.calls} ${entry.calls === 1 ? "call" : "calls"})`,
      ),
      ...(unknown > 0 ? [`${unknown} ${unknown === 1 ? "call" : "calls"} whose model the provider did not name`] : []),
    ];
    if (noPrice.length > 0) lines.push(style.dim(`no price known for: ${noPrice.join(", ")}`));
    const { limitUsd, spentUsd } = task.spending ?? { spentUsd: 0 };
    if (limitUsd !== undefined) lines.push(`this run: ${dollars(spentUsd)} of --max-cost ${dollars(limitUsd)}`);
    // terminal-safe: numbers, literals and model names made visible above.
    out.write(`${lines.join("\n")}\n`);
    return goOn;
  },
};

function dollars(usd: number): string {
  return `$${usd < 0.01 && usd > 0 ? usd.toFixed(4) : usd.toFixed(2)}`;
}
