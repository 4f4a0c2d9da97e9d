// @ts-check
/**
 * `/assets/edit-diff.js`: an `edit` call (a file's `oldText` replaced by `newText`) as a diff: the
 * lines both share at the start and the end as context, the rest as removed and added lines.
 */
import { h, plural } from "./dom.js";

/** Lines of shared context kept on each side of the change. */
const contextLines = 3;

/**
 * @param {string} oldText
 * @param {string} newText
 * @returns {HTMLElement}
 */
export function renderEditDiff(oldText, newText) {
  const before = oldText.split("\n");
  const after = newText.split("\n");
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (
    tail < before.length - head &&
    tail < after.length - head &&
    before[before.length - 1 - tail] === after[after.length - 1 - tail]
  )
    tail++;
  const removed = before.slice(head, before.length - tail);
  const added = after.slice(head, after.length - tail);
  const leading = before.slice(Math.max(0, head - contextLines), head);
  const trailing = before.slice(before.length - tail, before.length - tail + contextLines);
  return h(
    "pre.io-body.diff",
    { "aria-label": plural(removed.length, "line") + " removed, " + added.length + " added" },
    head > leading.length && diffLine("hunk", "… " + plural(head - leading.length, "unchanged line")),
    leading.map((text) => diffLine("same", "  " + text)),
    removed.map((text) => diffLine("del", "- " + text)),
    added.map((text) => diffLine("ins", "+ " + text)),
    trailing.map((text) => diffLine("same", "  " + text)),
    tail > trailing.length && diffLine("hunk", "… " + plural(tail - trailing.length, "unchanged line")),
  );
}

/**
 * @param {"same" | "del" | "ins" | "hunk"} kind
 * @param {string} text
 */
function diffLine(kind, text) {
  return h("span.diff-line." + kind, null, text + "\n");
}
