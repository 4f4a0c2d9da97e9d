import { AgentError, describeValue } from "./errors.ts";

/**
 * The longest delay `setTimeout` can hold: 2^31 - 1 ms (about 24.8 days). A longer one, or
 * `Infinity`, is not a long wait: the timer fires after 1 ms.
 */
export const maxTimerDelay = 2 ** 31 - 1;

/**
 * A delay `setTimeout` can hold: a negative or `NaN` delay becomes 0, a longer one than
 * `maxTimerDelay` (`Infinity` included) becomes `maxTimerDelay`. For every timer whose delay comes
 * from an option, a provider or a file (a poll interval, a backoff, a `retry-after`).
 */
export function clampDelay(ms: number): number {
  if (!(ms > 0)) return 0;
  return ms > maxTimerDelay ? maxTimerDelay : ms;
}

/**
 * What a numeric option accepts: at least `min` (or above it, when `exclusive`), whole numbers
 * only when `integer`, and `Infinity` only when `infinity` (where it means "no limit" or "no timer").
 */
export type NumberRule = { min: number; exclusive?: boolean; integer?: boolean; infinity?: boolean; max?: number };

/**
 * Checks a numeric option at the API boundary. `undefined` passes (the default applies); anything
 * else that breaks `rule` (a string, `NaN`, a negative count, `Infinity` where it has no meaning)
 * throws an `AgentError` that names the option, what it accepts and what it got.
 */
export function checkNumber(name: string, value: unknown, rule: NumberRule): void {
  if (value === undefined) return;
  const infinite = value === Number.POSITIVE_INFINITY;
  const valid =
    typeof value === "number" &&
    !Number.isNaN(value) &&
    (infinite
      ? rule.infinity === true
      : (rule.integer !== true || Number.isInteger(value)) &&
        (rule.exclusive === true ? value > rule.min : value >= rule.min)) &&
    (rule.max === undefined || value <= rule.max);
  if (!valid) throw new AgentError(`${name} must be ${describeRule(rule)}; got ${describeValue(value)}`);
}

function describeRule(rule: NumberRule): string {
  const kind = rule.integer === true ? "an integer" : "a number";
  const range =
    rule.max === undefined ? `${rule.exclusive === true ? ">" : ">="} ${rule.min}` : `from ${rule.min} to ${rule.max}`;
  return `${kind} ${range}${rule.infinity === true ? " (or Infinity)" : ""}`;
}

/** A duration for an event or a metric: milliseconds to 0.1 ms (a float's noise is not precision). */
export function roundMs(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/**
 * Checks a switch option at the API boundary: `undefined` passes (the default applies); anything
 * but `true` or `false` (a `"false"` that would read as true, a `1`) throws an `AgentError` naming
 * the option and what it got.
 */
export function checkBoolean(name: string, value: unknown): void {
  if (value === undefined || typeof value === "boolean") return;
  throw new AgentError(`${name} must be true or false; got ${describeValue(value)}`);
}

/**
 * Checks an option that takes one of a few strings: `undefined` passes; anything else not in
 * `choices` throws an `AgentError` naming the option, the choices and what it got.
 */
export function checkChoice(name: string, value: unknown, choices: readonly string[]): void {
  if (value === undefined || (typeof value === "string" && choices.includes(value))) return;
  throw new AgentError(
    `${name} must be one of ${choices.map((choice) => JSON.stringify(choice)).join(", ")}; got ${describeValue(value)}`,
  );
}
