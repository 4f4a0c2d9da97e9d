// @ts-check
/**
 * `/assets/list-view.js`: the list of a directory's sessions, as `/api/sessions` gives it, refreshed
 * while the page is visible.
 */
import { h, formatAgo, formatBytes, formatCount, formatDateTime, formatTokens, timeOf, plural } from "./dom.js";
import { isCount, isObject } from "./entry-check.js";
import { getJson } from "./get-json.js";
import { textOf } from "./render.js";

/** @typedef {import("./timeline.js").JsonObject} JsonObject */

/**
 * Draws the list into root, then polls for new and growing sessions (no reload needed).
 * @param {HTMLElement} root
 * @param {JsonObject} info a `SessionsResponse`, untrusted like everything the server read from a log
 */
export function showList(root, info) {
  const name = textOf(info.name);
  // Titled as a session's page is; the CLI's directory is itself named "sessions": no "sessions · sessions".
  document.title = (name.toLowerCase() === "sessions" ? "Sessions" : name) + " · session viewer";
  const body = h("tbody", null);
  const count = h("span.status", null);
  root.replaceChildren(
    h("header.bar", null, h("h1", null, name), count),
    h(
      "main.list",
      null,
      h(
        "table.sessions",
        null,
        h(
          "thead",
          null,
          h(
            "tr",
            null,
            h("th", null, "Session"),
            h("th", null, "Task"),
            h("th", null, "Workspace"),
            h("th", null, "Outcome"),
            h("th.num", null, "Messages"),
            h("th.num", null, "Tokens"),
            h("th", null, "Last activity"),
            h("th.num", null, "Size"),
          ),
        ),
        body,
      ),
    ),
  );
  fillRows(body, count, info.sessions);
  setInterval(() => {
    if (document.visibilityState === "visible")
      getJson("/api/sessions").then(
        (next) => fillRows(body, count, next.sessions),
        () => {},
      );
  }, 5000);
}

/**
 * @param {HTMLElement} body the table's body
 * @param {HTMLElement} count where the number of sessions is shown
 * @param {unknown} sessions
 */
function fillRows(body, count, sessions) {
  const now = Date.now();
  const list = Array.isArray(sessions) ? sessions.filter(isObject) : [];
  count.textContent = plural(list.length, "session");
  body.replaceChildren(...list.map((session) => sessionRow(session, now)));
  if (list.length === 0)
    body.append(h("tr", null, h("td.empty", { colspan: 8 }, "No *.jsonl session logs in this directory yet.")));
}

/**
 * The first task, and the latest one when the session went on with others.
 * @param {JsonObject} session
 */
function taskCell(session) {
  const first = textOf(session.title);
  const latest = typeof session.latestTask === "string" ? session.latestTask : "";
  const tasks = isCount(session.tasks) ? session.tasks : 0;
  return h(
    "td.title",
    null,
    h("div.first-task", null, first),
    tasks > 1 &&
      latest !== "" &&
      latest !== first &&
      h("div.latest-task", { title: plural(tasks, "task") + " in this session" }, "latest: " + latest),
  );
}

/**
 * One session's row. Each field is drawn when present, of the expected kind; a field missing or of
 * another kind is an empty cell.
 * @param {JsonObject} session
 * @param {number} now
 * @returns {HTMLElement}
 */
function sessionRow(session, now) {
  const file = textOf(session.file);
  const href = "?" + new URLSearchParams({ file }).toString();
  const at = timeOf(session.lastActivity);
  const tokens = isObject(session.tokens) ? session.tokens : undefined;
  const input = tokens && isCount(tokens.input) ? tokens.input : undefined;
  const output = tokens && isCount(tokens.output) ? tokens.output : undefined;
  const hasTokens = input !== undefined || output !== undefined;
  const outcome = typeof session.outcome === "string" ? session.outcome : "";
  return h(
    "tr",
    {
      "data-file": file,
      onclick: (event) => {
        if (!(event.target instanceof Element && event.target.closest("a"))) location.href = href;
      },
    },
    h(
      "td",
      null,
      h("a.session-link", { href }, file),
      isCount(session.problems) &&
        session.problems > 0 &&
        h("span.flag.error", { title: "lines that could not be read" }, plural(session.problems, "bad line")),
    ),
    taskCell(session),
    h("td.workspace", null, typeof session.workspace === "string" ? session.workspace : ""),
    h("td.outcome", { "data-outcome": outcome }, outcome),
    h("td.num", null, isCount(session.messages) ? formatCount(session.messages) : ""),
    h(
      "td.num.tokens",
      { title: hasTokens ? formatCount(input ?? 0) + " input, " + formatCount(output ?? 0) + " output tokens" : null },
      hasTokens ? formatTokens(input ?? 0) + " in · " + formatTokens(output ?? 0) + " out" : "",
    ),
    h("td.activity", { title: formatDateTime(at) }, at === undefined ? "" : formatAgo(at, now)),
    h("td.num", null, isCount(session.size) ? formatBytes(session.size) : ""),
  );
}
