import type { Usage } from "../session.ts";

/**
 * What a model's tokens cost, in USD per million. Cache reads and writes are part of the input;
 * where their rate is not given they cost the input rate.
 */
export type ModelPrice = {
  inputPerMTok: number;
  outputPerMTok: number;
  cacheReadPerMTok?: number;
  cacheWritePerMTok?: number;
};

/** The cost in USD of one call's usage: uncached input, cache reads and writes, output, each at its rate. */
export function costOf(usage: Usage, price: ModelPrice): number {
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  const uncached = Math.max(0, usage.inputTokens - cacheRead - cacheWrite);
  return (
    (uncached * price.inputPerMTok +
      cacheRead * (price.cacheReadPerMTok ?? price.inputPerMTok) +
      cacheWrite * (price.cacheWritePerMTok ?? price.inputPerMTok) +
      usage.outputTokens * price.outputPerMTok) /
    1_000_000
  );
}

/**
 * The price of `model` in `prices`: its own entry, else the longest key it starts with (a dated id
 * such as `claude-sonnet-4-5-20250929` takes the price of `claude-sonnet-4-5`); `undefined` when none.
 * The key `""` is the price of any other model, and of a call whose model is unknown.
 */
export function priceOf(
  prices: Readonly<Record<string, ModelPrice>>,
  model: string | undefined,
): ModelPrice | undefined {
  // Every id starts with "": that key prices any model not listed, and a call that named none.
  if (model === undefined) return Object.hasOwn(prices, "") ? prices[""] : undefined;
  if (Object.hasOwn(prices, model)) return prices[model];
  let best: string | undefined;
  for (const key of Object.keys(prices))
    if (model.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  return best === undefined ? undefined : prices[best];
}
