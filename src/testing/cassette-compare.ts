/** Where two JSON values first differ, depth first in key order: `messages[3].content`, with both values. */
export type Difference = { path: string; recorded: unknown; now: unknown };

export function firstDifference(recorded: unknown, now: unknown, path = ""): Difference | undefined {
  if (Object.is(recorded, now)) return undefined;
  if (Array.isArray(recorded) && Array.isArray(now)) {
    const shared = Math.min(recorded.length, now.length);
    for (let index = 0; index < shared; index++) {
      const found = firstDifference(recorded[index], now[index], `${path}[${index}]`);
      if (found !== undefined) return found;
    }
    if (recorded.length === now.length) return undefined;
    return { path: `${path}[${shared}]`, recorded: recorded[shared], now: now[shared] };
  }
  if (isObject(recorded) && isObject(now)) {
    const keys = [...Object.keys(recorded), ...Object.keys(now).filter((key) => !(key in recorded))];
    for (const key of keys) {
      const found = firstDifference(recorded[key], now[key], path === "" ? key : `${path}.${key}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  return { path: path === "" ? "(the whole value)" : path, recorded, now };
}

/** A value for a mismatch message: JSON, cut to `max` characters; `(absent)` for a missing one. */
export function showValue(value: unknown, max = 200): string {
  if (value === undefined) return "(absent)";
  // JSON.stringify gives undefined only for a function or a symbol: a cassette holds neither.
  const text = JSON.stringify(value) ?? typeof value;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
