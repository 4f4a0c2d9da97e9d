// @ts-check
/**
 * `/assets/session-heading.js`: the page's title and heading: the task (the first user message),
 * the file it is read from, and where the session works.
 */
import { h, fill } from "./dom.js";
import { isObject } from "./entry-check.js";

/** @typedef {import("./timeline.js").Timeline} Timeline */
/** @typedef {import("./timeline.js").Turn} Turn */

/**
 * Writes the heading, its subtitle and the document's title; the file's name stands in for a task
 * not known yet. A long task is cut (its whole text is the heading's title).
 * @param {{ heading: HTMLElement, subtitle: HTMLElement }} nodes
 * @param {Timeline} timeline
 * @param {string} file
 */
export function renderHeading(nodes, timeline, file) {
  const firstTurn = timeline.turns.find((turn) => turn.number === 1);
  const first = firstTurn?.items[0];
  const task =
    first && first.kind === "message" && typeof first.message.content === "string"
      ? first.message.content.slice(0, 2000).replace(/\s+/g, " ").trim()
      : "";
  const workspace = workspaceOf(timeline.turns[0]);
  nodes.heading.textContent = task === "" ? file : task.length > 200 ? task.slice(0, 200) + "…" : task;
  nodes.heading.title = task === "" ? file : task;
  fill(
    nodes.subtitle,
    task !== "" && h("span.file", null, file),
    workspace !== undefined && h("span.workspace", { title: "workspace" }, workspace),
  );
  document.title = (task === "" ? file : task.length > 80 ? task.slice(0, 80) + "…" : task) + " · session viewer";
}

/**
 * Where the session works, as the CLI records it (a `workspace` custom entry before the first task).
 * @param {Turn | undefined} turn
 * @returns {string | undefined}
 */
function workspaceOf(turn) {
  if (turn === undefined) return undefined;
  let workspace;
  for (const item of turn.items) {
    if (item.kind !== "custom" || item.entry.customType !== "workspace") continue;
    const data = item.entry.data;
    if (isObject(data) && typeof data.workspace === "string") workspace = data.workspace;
  }
  return workspace;
}
