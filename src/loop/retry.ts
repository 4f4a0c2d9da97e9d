import { isRetryable } from "../errors.ts";
import { checkNumber, clampDelay } from "../numeric-options.ts";

/** How the loop repeats a model call that failed with a retryable error. */
export type RetryOptions = {
  /** Repeats after the first attempt: an integer >= 0 (default 2). `0` turns retries off. */
  maxRetries?: number;
  /** The first backoff in ms, doubled each attempt: a finite number >= 0 (default 500 ms). */
  initialDelayMs?: number;
  /**
   * No wait is longer than this, whatever the provider asks (default 60 s). `Infinity`: as long as
   * asked, up to what a timer can hold (about 24.8 days).
   */
  maxDelayMs?: number;
};

/**
 * The wait before retry number `attempt` (1 for the first retry), or `undefined` when the error is
 * not retryable or the retries are used up. Honours the provider's `retryAfterMs`; otherwise
 * exponential backoff with jitter (half fixed, half random), so clients failing together do not
 * retry together.
 */
export function retryDelay(error: unknown, attempt: number, options: RetryOptions = {}): number | undefined {
  checkRetryOptions(options);
  const { maxRetries = 2, initialDelayMs = 500, maxDelayMs = 60_000 } = options;
  if (attempt > maxRetries || !isRetryable(error)) return undefined;
  const asked: unknown =
    typeof error === "object" && error !== null && "retryAfterMs" in error ? error.retryAfterMs : undefined;
  // Whatever was asked, the wait is one a timer can hold: a longer one would fire at once.
  if (typeof asked === "number" && asked >= 0) return Math.round(clampDelay(Math.min(asked, maxDelayMs)));
  const ceiling = clampDelay(Math.min(initialDelayMs * 2 ** (attempt - 1), maxDelayMs));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/** Throws an `AgentError` for retry options that are not numbers they can mean (see `RetryOptions`). */
export function checkRetryOptions(options: RetryOptions): void {
  checkNumber("retry.maxRetries", options.maxRetries, { min: 0, integer: true, infinity: true });
  checkNumber("retry.initialDelayMs", options.initialDelayMs, { min: 0 });
  checkNumber("retry.maxDelayMs", options.maxDelayMs, { min: 0, infinity: true });
}
