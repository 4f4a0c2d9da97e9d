/**
 * The length of `JSON.stringify(value)`, counted without building it, or a number above `limit`
 * as soon as it is known to be longer: escapes count as JSON writes them (`\n` 2 characters, a
 * control character or a lone surrogate 6), keys with `undefined` values are left out as JSON
 * leaves them. Compaction measures a message with it before deciding to cut it, so a message that
 * stays as it is costs no string.
 */
export function jsonLength(value: unknown, limit = Infinity): number {
  return measure(value, 0, limit);
}

// `used` characters are counted already; returns the new total (at most a little over `limit` when it stopped early).
function measure(value: unknown, used: number, limit: number): number {
  if (typeof value === "string") return used + stringLength(value, limit - used);
  if (typeof value === "number") return used + numberLength(value);
  if (typeof value === "boolean") return used + (value ? 4 : 5);
  if (value === null || value === undefined) return used + 4;
  if (typeof value !== "object") return used + (JSON.stringify(value)?.length ?? 4);
  // A value with its own JSON form (a Date, say) is measured by what it writes.
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return used + JSON.stringify(value).length;
  let total = used + 2;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      if (index > 0) total++;
      const element: unknown = value[index];
      total = typeof element === "function" ? total + 4 : measure(element, total, limit);
      if (total > limit) return total;
    }
    return total;
  }
  let first = true;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const item = (value as Record<string, unknown>)[key];
    if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
    if (!first) total++;
    first = false;
    total += stringLength(key, Infinity) + 1;
    total = measure(item, total, limit);
    if (total > limit) return total;
  }
  return total;
}

// The quoted, escaped length of `text`; stops once it passes `limit` (its own length is a floor).
function stringLength(text: string, limit: number): number {
  let length = text.length + 2;
  if (length > limit) return length;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 0x22 || code === 0x5c) length += 1;
    else if (code < 0x20)
      length += code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 1 : 5;
    else if (code >= 0xd800 && code <= 0xdfff) {
      const next = text.charCodeAt(index + 1);
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) index++;
      else length += 5;
    }
    if (length > limit) return length;
  }
  return length;
}

function numberLength(value: number): number {
  if (!Number.isFinite(value)) return 4;
  if (Number.isInteger(value) && Math.abs(value) < 1e15) {
    let digits = value < 0 ? 2 : 1;
    for (let rest = Math.abs(value); rest >= 10; rest = Math.floor(rest / 10)) digits++;
    return digits;
  }
  return String(value).length;
}
