/**
 * The length of `JSON.stringify(value, null, indent)`, counted without building it, or a number
 * above `limit` as soon as it is known to be longer: escapes count as JSON writes them (`\n` 2
 * characters, a control character or a lone surrogate 6), keys with `undefined` values are left out
 * as JSON leaves them, and with an `indent` each entry's line break, indentation and the space
 * after a key count. Compaction measures a message with it before deciding to cut it, and a tool
 * output before deciding to offload or clear it, so what stays as it is costs no string.
 */
export function jsonLength(value: unknown, limit = Infinity, indent = 0): number {
  return measure(value, 0, limit, indent, 0);
}

/**
 * Whether `JSON.stringify(value)` is surely at most `limit` long, by a bound that reads no
 * character: a string counts 6 per character (every one an escape), a number 24, a key 6 per
 * character. `false` says nothing: measure it then (`jsonLength`). Most tool inputs are small, and
 * this answers for them at once.
 */
export function surelyWithin(value: unknown, limit: number): boolean {
  return room(value, limit) >= 0;
}

function room(value: unknown, left: number): number {
  if (typeof value === "string") return left - 2 - 6 * value.length;
  if (typeof value === "number") return left - 24;
  if (typeof value === "boolean" || value === null || value === undefined) return left - 5;
  if (typeof value !== "object" || typeof (value as { toJSON?: unknown }).toJSON === "function") return -1;
  left -= 2;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length && left >= 0; index++) left = room(value[index], left - 1);
    return left;
  }
  for (const key in value) {
    left = room((value as Record<string, unknown>)[key], left - 4 - 6 * key.length);
    if (left < 0) return left;
  }
  return left;
}

// `used` characters are counted already; returns the new total (at most a little over `limit` when
// it stopped early). `depth`: how many containers hold `value` (its indentation with `indent`).
function measure(value: unknown, used: number, limit: number, indent: number, depth: number): number {
  if (typeof value === "string") return used + stringLength(value, limit - used);
  if (typeof value === "number") return used + numberLength(value);
  if (typeof value === "boolean") return used + (value ? 4 : 5);
  if (value === null || value === undefined) return used + 4;
  if (typeof value !== "object") return used + (JSON.stringify(value)?.length ?? 4);
  // A value with its own JSON form (a Date, say) is measured by what it writes.
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return used + ownJsonLength(value, indent, depth);
  // With an indent, each entry starts a line indented one level deeper than its container.
  const entryStart = indent === 0 ? 0 : 1 + (depth + 1) * indent;
  let total = used + 2;
  let entries = 0;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      if (index > 0) total++;
      total += entryStart;
      const element: unknown = value[index];
      total = typeof element === "function" ? total + 4 : measure(element, total, limit, indent, depth + 1);
      if (total > limit) return total;
    }
    entries = value.length;
  } else
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const item = (value as Record<string, unknown>)[key];
      if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
      if (entries > 0) total++;
      entries++;
      // The key, its colon and, indented, the space after it.
      total += entryStart + stringLength(key, Infinity) + (indent === 0 ? 1 : 2);
      total = measure(item, total, limit, indent, depth + 1);
      if (total > limit) return total;
    }
  // The closing bracket of a container with entries is on a line of its own.
  return entries > 0 && indent > 0 ? total + 1 + depth * indent : total;
}

// What a value's own `toJSON` writes, indented as it would be at `depth`.
function ownJsonLength(value: object, indent: number, depth: number): number {
  const text = JSON.stringify(value, null, indent);
  if (indent === 0 || depth === 0) return text.length;
  let lines = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) lines++;
  return text.length + lines * depth * indent;
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
    for (let power = 10, rest = Math.abs(value); rest >= power; power *= 10) digits++;
    return digits;
  }
  return String(value).length;
}
