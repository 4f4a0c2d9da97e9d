import { checkNumber } from "../numeric-options.ts";

/**
 * The smallest `maxStepBytes`: room for any step the run journals that is not the tool's or the
 * model's own data (an error text is cut to fit, a too-large answer becomes a short error).
 */
export const minStepBytes = 1024;

/** Throws an `AgentError` unless `maxStepBytes` is a whole number of bytes from `minStepBytes` up. */
export function checkMaxStepBytes(value: unknown): void {
  checkNumber("restateAgent: maxStepBytes", value, { min: minStepBytes, integer: true });
}

/**
 * `text` cut so that its JSON string takes at most `budget` bytes (UTF-8), saying it was cut;
 * `text` itself when it fits.
 */
export function fitText(text: string, budget: number): string {
  if (Buffer.byteLength(JSON.stringify(text)) <= budget) return text;
  const marker = "… (cut to fit maxStepBytes)";
  // Escapes take at most 6 bytes per character in JSON: start from a length that surely fits, then grow.
  let low = 0;
  let high = text.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (Buffer.byteLength(JSON.stringify(text.slice(0, middle) + marker)) <= budget) low = middle;
    else high = middle - 1;
  }
  return text.slice(0, low) + marker;
}
