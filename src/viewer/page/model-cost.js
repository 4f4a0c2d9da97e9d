// @ts-check
/**
 * `/assets/model-cost.js`: what a model call cost, where the viewer was given prices
 * (`serveViewer(path, { prices })`, sent with `/api/target`): the library's `costOf` and `priceOf`
 * on the page. No DOM here.
 */
import { isCount, isObject } from "./entry-check.js";

/** @typedef {import("./entry-check.js").JsonObject} JsonObject */
/** @typedef {{ inputPerMTok: number, outputPerMTok: number, cacheReadPerMTok?: number, cacheWritePerMTok?: number }} ModelPrice */

/** @type {Map<string, ModelPrice>} */
const prices = new Map();

/**
 * Takes the prices `/api/target` sent (USD per million tokens by model id); anything else is ignored.
 * @param {unknown} table
 */
export function setPrices(table) {
  prices.clear();
  if (!isObject(table)) return;
  for (const [model, price] of Object.entries(table))
    if (isObject(price) && isRate(price.inputPerMTok) && isRate(price.outputPerMTok))
      prices.set(model, /** @type {ModelPrice} */ (price));
}

/** Whether any prices are known (else no cost is shown anywhere). */
export function hasPrices() {
  return prices.size > 0;
}

/**
 * The cost in USD of a call by `model` with `usage`, or undefined when either is unknown.
 * @param {unknown} model
 * @param {unknown} usage
 * @returns {number | undefined}
 */
export function callCost(model, usage) {
  if (!isObject(usage)) return undefined;
  const price = priceOf(typeof model === "string" ? model : undefined);
  if (price === undefined) return undefined;
  const count = (/** @type {unknown} */ value) => (isCount(value) ? value : 0);
  const read = count(usage.cacheReadTokens);
  const written = count(usage.cacheWriteTokens);
  const uncached = Math.max(0, count(usage.inputTokens) - read - written);
  return (
    (uncached * price.inputPerMTok +
      read * (price.cacheReadPerMTok ?? price.inputPerMTok) +
      written * (price.cacheWritePerMTok ?? price.inputPerMTok) +
      count(usage.outputTokens) * price.outputPerMTok) /
    1_000_000
  );
}

/**
 * USD as people read a small amount: $0.0123, $1.23.
 * @param {number} usd
 */
export function formatUsd(usd) {
  return "$" + (usd < 1 ? usd.toFixed(4) : usd.toFixed(2));
}

// Its own entry, else the longest key the id starts with (a dated id takes its family's price);
// the key "" prices any other model and a call whose model is unknown, as the library's priceOf.
/** @param {string | undefined} model */
function priceOf(model) {
  if (model === undefined) return prices.get("");
  const own = prices.get(model);
  if (own !== undefined) return own;
  /** @type {string | undefined} */
  let best;
  for (const key of prices.keys())
    if (model.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  return best === undefined ? undefined : prices.get(best);
}

/** @param {unknown} value */
function isRate(value) {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}
