/**
 * Whether two JSON values are equal, objects' keys in any order: compared in place, without copies
 * or sorted strings, so the first difference ends it. The one comparison for "the same input" (the
 * loop guard's repeats, an approval bound to its input, a policy's `equals`, a program's replayed
 * calls). Values come from parsed JSON, whose depth the readers bound.
 */
export function sameJson(value: unknown, other: unknown): boolean {
  if (value === other) return true;
  if (typeof value !== "object" || typeof other !== "object" || value === null || other === null) return false;
  if (Array.isArray(value)) {
    if (!Array.isArray(other) || value.length !== other.length) return false;
    for (let index = 0; index < value.length; index++) if (!sameJson(value[index], other[index])) return false;
    return true;
  }
  if (Array.isArray(other)) return false;
  const left = value as Record<string, unknown>;
  const right = other as Record<string, unknown>;
  let keys = 0;
  for (const key in left) {
    if (!Object.hasOwn(left, key)) continue;
    if (!Object.hasOwn(right, key) || !sameJson(left[key], right[key])) return false;
    keys++;
  }
  for (const key in right) if (Object.hasOwn(right, key)) keys--;
  return keys === 0;
}
