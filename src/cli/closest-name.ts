/**
 * The name of `names` closest to what was `typed`, for a "did you mean" (an option, a command):
 * one `typed` starts (2 characters at least) counts as one edit; otherwise the edits from one to
 * the other, a swap of two neighbouring letters counting as one (`modle` is one edit from `model`).
 * At most 2 edits; on a tie, the name as long as what was typed (a swap or a wrong letter, not one
 * missing). Undefined when none is that close.
 */
export function closestName(typed: string, names: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = name.startsWith(typed) && typed.length >= 2 ? 1 : editDistance(typed, name);
    const better =
      best === undefined ||
      distance < best.distance ||
      (distance === best.distance && name.length === typed.length && best.name.length !== typed.length);
    if (distance <= 2 && better) best = { name, distance };
  }
  return best?.name;
}

// Edits from `a` to `b`, a swap of two neighbouring letters counting as one.
function editDistance(a: string, b: string): number {
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        current[j] = Math.min(current[j]!, beforePrevious[j - 2]! + 1);
    }
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length]!;
}
