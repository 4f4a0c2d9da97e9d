/**
 * A provider's usage object with only what can be a token count: every number that is a
 * non-negative safe integer, in nested objects too; anything else (text such as `"012"`, a
 * negative, fractional or unbounded number, null, an object where a count is named) is left out,
 * so the adapter reads it as absent.
 * Every adapter reads a server's usage through this, before any arithmetic on it.
 */
export function tokenCounts<Counts extends object>(usage: Counts): Counts {
  const counts: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(usage)) {
    if (typeof value === "number") {
      if (Number.isSafeInteger(value) && value >= 0) counts[name] = value;
    } else if (typeof value === "object" && value !== null && !Array.isArray(value) && !namesACount(name)) {
      counts[name] = tokenCounts(value as object);
    }
  }
  return counts as Counts;
}

// `input_tokens`, `outputTokens`, `promptTokenCount`: a count, never an object of details.
function namesACount(name: string): boolean {
  return /(tokens|Tokens|Count)$/.test(name);
}
