import { isRetryable } from "./errors.ts";

/** How the loop repeats a model call that failed with a retryable error. */
export type RetryOptions = {
  /** Repeats after the first attempt (default 2). `0` turns retries off. */
  maxRetries?: number;
  /** The first backoff, doubled each attempt (default 500 ms). */
  initialDelayMs?: number;
  /** No wait is longer than this, whatever the provider asks (default 60 s). */
  maxDelayMs?: number;
};

/**
 * The wait before retry number `attempt` (1 for the first retry), or `undefined` when the error is
 * not retryable or the retries are used up. Honours the provider's `retryAfterMs`; otherwise
 * exponential backoff with jitter (half fixed, half random), so clients failing together do not
 * retry together.
 */
export function retryDelay(error: unknown, attempt: number, options: RetryOptions = {}): number | undefined {
  const { maxRetries = 2, initialDelayMs = 500, maxDelayMs = 60_000 } = options;
  if (attempt > maxRetries || !isRetryable(error)) return undefined;
  const asked = (error as { retryAfterMs?: unknown }).retryAfterMs;
  if (typeof asked === "number" && Number.isFinite(asked) && asked >= 0) return Math.min(asked, maxDelayMs);
  const ceiling = Math.min(initialDelayMs * 2 ** (attempt - 1), maxDelayMs);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}
