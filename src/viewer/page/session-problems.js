// @ts-check
/**
 * `/assets/session-problems.js`: the box above the timeline that lists what is wrong with the log,
 * hidden while nothing is.
 */
import { h, fill, formatBytes, plural } from "./dom.js";

/** @typedef {import("./timeline.js").Problem} Problem */
/** @typedef {import("./timeline.js").Timeline} Timeline */

/**
 * What the box lists. `lineProblems`: lines that are not entries; `fileProblem`: why the log cannot
 * be read at all; `partialLine`: the last line, still without its end.
 * @typedef {{ timeline: Timeline, lineProblems: readonly Problem[], fileProblem: string | undefined, partialLine: { line: number, bytes: number } | undefined }} LogProblems
 */

/**
 * Lists the log's problems (by line, the first 200) beside `failed`, the parts of the page that
 * could not be drawn.
 * @param {HTMLElement} container
 * @param {LogProblems} log
 * @param {readonly string[]} failed
 */
export function renderProblems(container, log, failed) {
  const { fileProblem, partialLine } = log;
  const drawing = log.timeline.turns.flatMap((turn) => turn.problems ?? []);
  const all = [...log.lineProblems, ...log.timeline.problems, ...drawing].sort((a, b) => a.line - b.line);
  container.hidden = all.length === 0 && failed.length === 0 && fileProblem === undefined && partialLine === undefined;
  fill(
    container,
    fileProblem !== undefined && h("div.problem", null, fileProblem),
    failed.map((text) => h("div.problem", null, text)),
    partialLine !== undefined &&
      h(
        "div.problem.partial",
        null,
        "Line " +
          partialLine.line +
          " is incomplete (" +
          formatBytes(partialLine.bytes) +
          " without an end of line): it is being written, or the writer stopped mid-line (a crash). It is shown once complete.",
      ),
    all.length > 0 &&
      h("div.problem-title", null, plural(all.length, "problem") + " in the log; everything else is shown:"),
    h(
      "ul",
      null,
      all
        .slice(0, 200)
        .map((problem) => h("li", null, h("span.line", null, "line " + problem.line), " ", problem.message)),
    ),
    all.length > 200 && h("div", null, "… and " + (all.length - 200) + " more"),
  );
}
