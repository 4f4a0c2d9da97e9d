// @ts-check
/**
 * `/assets/task-view.js`: a session's background tasks, read from the log alone as
 * `backgroundTasks(session)` reads the session: a call whose result carries `task` started one;
 * the record is updated in place when it settles; a message carrying `deliversTask` gave the model
 * its outcome. Drawn on the call that started each task, and as a list above the turns.
 *
 * Every field is untrusted JSON: a value of another kind is left out, never drawn as markup.
 */
import { h, fill, formatClock, formatDateTime, formatDuration, pretty, timeOf } from "./dom.js";
import { isObject } from "./entry-check.js";

/** @typedef {import("./entry-check.js").JsonObject} JsonObject */
/** @typedef {import("./timeline.js").Timeline} Timeline */

/**
 * The task a call's result started, drawn under the call: its id, status, attempt, times, and its
 * outcome (or why it was cancelled or lost) once settled.
 * @param {JsonObject} task
 * @param {boolean} delivered
 * @returns {HTMLElement}
 */
export function renderTask(task, delivered) {
  const status = statusOf(task);
  const started = timeOf(task.startedAt);
  const settled = timeOf(task.settledAt);
  const outcome =
    task.output !== undefined
      ? h("pre.io-body", null, pretty(task.output))
      : typeof task.reason === "string" && h("div.io-body", null, task.reason);
  return h(
    "div.task." + status,
    { "data-task": text(task.id) },
    h(
      "div.task-head",
      null,
      h("span.task-label", null, "background task"),
      h("code.task-id", null, text(task.id)),
      h("span.task-status", null, status),
      typeof task.attempt === "number" && task.attempt > 1 && h("span.task-attempt", null, "attempt " + task.attempt),
      started !== undefined &&
        h("span.task-time", { title: "started " + formatDateTime(started) }, "started " + formatClock(started)),
      settled !== undefined &&
        h(
          "span.task-time",
          { title: "settled " + formatDateTime(settled) },
          "settled " +
            formatClock(settled) +
            (started !== undefined ? " (" + formatDuration(Math.max(0, settled - started)) + ")" : ""),
        ),
      status !== "running" &&
        h("span.task-delivered", null, delivered ? "outcome given to the model" : "outcome not given to the model yet"),
    ),
    outcome &&
      h(
        "div.task-outcome",
        null,
        h("div.io-label", null, task.isError === true ? "outcome (error)" : "outcome"),
        outcome,
      ),
  );
}

/**
 * The session's tasks in start order, one line each; hidden when it has none.
 * @param {HTMLElement} container
 * @param {Timeline} timeline
 */
export function renderTasks(container, timeline) {
  const tasks = tasksOf(timeline);
  container.hidden = tasks.length === 0;
  if (tasks.length === 0) return fill(container);
  const delivered = deliveredTasks(timeline);
  fill(
    container,
    h("div.io-label", null, "background tasks"),
    h(
      "table.task-list",
      null,
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          ["Task", "Tool", "Status", "Started", "Settled", "Delivered"].map((name) => h("th", null, name)),
        ),
      ),
      h(
        "tbody",
        null,
        tasks.map(({ task, name, callId }) => {
          const started = timeOf(task.startedAt);
          const settled = timeOf(task.settledAt);
          const status = statusOf(task);
          return h(
            "tr." + status,
            { "data-task": text(task.id) },
            h("td", null, h("code", null, text(task.id))),
            h("td", null, h("code", null, name), " ", h("span.task-call", null, callId)),
            h("td.task-status", null, status),
            h("td", null, started === undefined ? "" : formatClock(started)),
            h(
              "td",
              null,
              settled === undefined
                ? ""
                : formatClock(settled) +
                    (started !== undefined ? " (" + formatDuration(Math.max(0, settled - started)) + ")" : ""),
            ),
            h("td", null, status === "running" ? "" : delivered.has(task.id) ? "yes" : "not yet"),
          );
        }),
      ),
    ),
  );
}

/**
 * The ids of the tasks whose outcome a live message gave the model.
 * @param {Timeline} timeline
 * @returns {Set<unknown>}
 */
export function deliveredTasks(timeline) {
  const delivered = new Set();
  for (const item of timeline.live)
    if (typeof item.message.deliversTask === "string") delivered.add(item.message.deliversTask);
  return delivered;
}

/**
 * @param {Timeline} timeline
 * @returns {{ task: JsonObject, name: string, callId: string }[]}
 */
function tasksOf(timeline) {
  /** @type {{ task: JsonObject, name: string, callId: string }[]} */
  const tasks = [];
  for (const call of timeline.calls.values()) {
    const result = call.result;
    const task = result && result.message.task;
    if (isObject(task)) tasks.push({ task, name: text(call.message.name), callId: text(call.message.id) });
  }
  return tasks;
}

const statuses = new Set(["running", "completed", "failed", "cancelled", "lost"]);

/**
 * The task's status, one of the page's class names ("unknown" for anything else).
 * @param {JsonObject} task
 * @returns {string}
 */
function statusOf(task) {
  return typeof task.status === "string" && statuses.has(task.status) ? task.status : "unknown";
}

/** @param {unknown} value */
function text(value) {
  return value === undefined ? "" : pretty(value);
}
