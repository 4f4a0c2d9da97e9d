// @ts-check
/**
 * `/assets/app.js`: the page's entry. Asks `/api/target` what it serves: one log (shown at once)
 * or a directory (a list of logs from `/api/sessions`; `?file=NAME` shows one). A shown log is read
 * from `/api/events` (Server-Sent Events): the whole log, in pieces, then each change, drawn as it
 * comes; only the turns a change touches are redrawn.
 */
import { h, errorText, fill, formatAgo, formatBytes, formatCount, formatDateTime, formatDuration, formatTokens, timeOf, plural } from "./dom.js";
import { isCount, isObject } from "./entry-check.js";
import { applyRecords, createTimeline } from "./timeline.js";
import { turnStats } from "./turn-stats.js";
import { renderTurn, textOf } from "./render.js";
import { renderChart } from "./chart.js";
import { followEvents } from "./stream.js";

/** @typedef {import("./timeline.js").Problem} Problem */
/** @typedef {import("./timeline.js").Turn} Turn */
/** @typedef {import("./turn-stats.js").TurnStats} TurnStats */
/** @typedef {import("./timeline.js").JsonObject} JsonObject */

const root = /** @type {HTMLElement} */ (document.getElementById("app"));

start().catch((error) => {
  root.replaceChildren(h("div.problems", { role: "alert" }, h("strong", null, "The viewer could not start: "), errorText(error)));
});

async function start() {
  const target = await getJson("/api/target");
  const name = textOf(target.name);
  const file = new URLSearchParams(location.search).get("file");
  if (target.mode === "file") return showSession(name, undefined);
  if (file !== null) return showSession(file, name);
  showList(await getJson("/api/sessions"));
}

/**
 * @param {string} url
 * @returns {Promise<JsonObject>}
 */
async function getJson(url) {
  const response = await fetch(url, { headers: { accept: "application/json" } });
  /** @type {unknown} */
  const body = await response.json();
  if (!isObject(body)) throw new Error(response.statusText || "not a JSON object");
  if (!response.ok) throw new Error(typeof body.error === "string" ? body.error : response.statusText);
  return body;
}

/**
 * The list of a directory's sessions. Each session's fields are drawn when present, of the
 * expected kind; a field missing or of another kind is an empty cell.
 * @param {JsonObject} info
 */
function showList(info) {
  const name = textOf(info.name);
  document.title = name + " · sessions";
  const body = h("tbody", null);
  const count = h("span.status", null);
  root.replaceChildren(
    h("header.bar", null, h("h1", null, name), count),
    h("main.list", null, h("table.sessions", null,
      h("thead", null, h("tr", null, h("th", null, "Session"), h("th", null, "Task"), h("th", null, "Workspace"), h("th", null, "Outcome"),
        h("th.num", null, "Messages"), h("th.num", null, "Tokens"), h("th", null, "Last activity"), h("th.num", null, "Size"))),
      body)));
  /** @param {unknown} sessions */
  const fillRows = (sessions) => {
    const now = Date.now();
    const list = Array.isArray(sessions) ? sessions.filter(isObject) : [];
    count.textContent = plural(list.length, "session");
    body.replaceChildren(...list.map((session) => {
      const file = textOf(session.file);
      const href = "?" + new URLSearchParams({ file }).toString();
      const at = timeOf(session.lastActivity);
      const tokens = isObject(session.tokens) ? session.tokens : undefined;
      const input = tokens && isCount(tokens.input) ? tokens.input : undefined;
      const output = tokens && isCount(tokens.output) ? tokens.output : undefined;
      const outcome = typeof session.outcome === "string" ? session.outcome : "";
      return h("tr", { "data-file": file, onclick: (event) => { if (!(event.target instanceof Element && event.target.closest("a"))) location.href = href; } },
        h("td", null, h("a.session-link", { href }, file), isCount(session.problems) && session.problems > 0 && h("span.flag.error", { title: "lines that could not be read" }, plural(session.problems, "bad line"))),
        h("td.title", null, textOf(session.title)),
        h("td.workspace", null, typeof session.workspace === "string" ? session.workspace : ""),
        h("td.outcome", { "data-outcome": outcome }, outcome),
        h("td.num", null, isCount(session.messages) ? formatCount(session.messages) : ""),
        h("td.num.tokens", { title: input !== undefined || output !== undefined ? formatCount(input ?? 0) + " input, " + formatCount(output ?? 0) + " output tokens" : null },
          input !== undefined || output !== undefined ? formatTokens(input ?? 0) + " in · " + formatTokens(output ?? 0) + " out" : ""),
        h("td.activity", { title: formatDateTime(at) }, at === undefined ? "" : formatAgo(at, now)),
        h("td.num", null, isCount(session.size) ? formatBytes(session.size) : ""));
    }));
    if (list.length === 0) body.append(h("tr", null, h("td.empty", { colspan: 8 }, "No *.jsonl session logs in this directory yet.")));
  };
  fillRows(info.sessions);
  // New and growing sessions show up without a reload.
  setInterval(() => {
    if (document.visibilityState === "visible") getJson("/api/sessions").then((next) => fillRows(next.sessions), () => {});
  }, 5000);
}

/**
 * @param {string} file
 * @param {string | undefined} directoryName
 */
function showSession(file, directoryName) {
  document.title = file + " · session viewer";
  const status = h("span.status.connecting", null, "connecting…");
  const expand = h("button.toggle", { type: "button" }, "Expand thinking");
  const heading = h("h1", { title: file }, file);
  const subtitle = h("span.subtitle", null, file);
  const totals = h("div.totals", null);
  const chart = h("div.chart", null);
  const problems = h("div.problems", { role: "alert", hidden: true });
  const turnsNode = h("main.timeline", null);
  root.replaceChildren(
    h("header.bar", null, directoryName !== undefined && h("a.back", { href: location.pathname }, "← " + directoryName), h("div.heading", null, heading, subtitle), status, expand),
    h("section.overview", null, totals, chart),
    problems,
    turnsNode);

  let timeline = createTimeline();
  /** @type {HTMLElement[]} */
  let nodes = [];
  /** @type {Problem[]} */
  let lineProblems = [];
  /** @type {string | undefined} */
  let fileProblem;
  /** @type {{ line: number, bytes: number } | undefined} */
  let partialLine;
  let drawn = false;
  let scheduled = false;
  let thinkingOpen = false;

  // A long output is clipped to keep the timeline dense; a click shows it whole (not when selecting text),
  // and so does Enter on it once focused (Tab reaches a block that scrolls).
  /** @param {Element} block */
  const toggleClipped = (block) => {
    if (block.classList.contains("expanded")) block.classList.remove("expanded");
    else if (block.classList.contains("clipped")) block.classList.add("expanded");
  };
  /** @param {Event} event */
  const blockOf = (event) => (event.target instanceof Element ? event.target.closest(".io-body, .text") : null);
  turnsNode.addEventListener("click", (event) => {
    const block = blockOf(event);
    const selection = getSelection();
    if (block && (selection === null || selection.isCollapsed)) toggleClipped(block);
  });
  turnsNode.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || !(event.target instanceof Element) || !event.target.matches(".io-body, .text")) return;
    markClipped(event);
    toggleClipped(event.target);
  });
  // Marks clipped blocks once they are laid out (an invisible turn, content-visibility: auto, has no size yet).
  /** @param {Event} event */
  const markClipped = (event) => {
    const block = blockOf(event);
    if (!(block instanceof HTMLElement) || block.classList.contains("expanded")) return;
    const clipped = block.scrollHeight > block.clientHeight + 2;
    block.classList.toggle("clipped", clipped);
    if (clipped) block.title = "Clipped: click it (or press Enter on it) to show it whole";
  };
  turnsNode.addEventListener("mouseover", markClipped);
  turnsNode.addEventListener("focusin", markClipped);

  expand.addEventListener("click", () => {
    thinkingOpen = !thinkingOpen;
    expand.textContent = thinkingOpen ? "Collapse thinking" : "Expand thinking";
    for (const details of turnsNode.querySelectorAll("details.thinking")) if (details instanceof HTMLDetailsElement) details.open = thinkingOpen;
  });

  followEvents("/api/events?" + new URLSearchParams({ file }).toString(), {
    onOpen: () => setStatus("live", "live"),
    onBroken: () => setStatus("reconnecting", "reconnecting…"),
    onRefused: (message) => {
      setStatus("reconnecting", "not available");
      fileProblem = message;
      schedule();
    },
    onUpdate: (update) => {
      if (update.reset) {
        timeline = createTimeline();
        nodes = [];
        lineProblems = [];
        turnsNode.replaceChildren();
      }
      fileProblem = update.missing ? "There is no file at this path (any more). Waiting for it to appear." : update.reset ? undefined : fileProblem;
      partialLine = update.partial;
      for (const problem of update.problems) {
        if (problem.line === undefined) fileProblem = problem.message;
        else lineProblems.push({ line: problem.line, message: problem.message });
      }
      applyRecords(timeline, update.records);
      setStatus("live", "live · updated " + new Date().toLocaleTimeString("en-GB", { hour12: false }));
      schedule();
    },
  });

  /**
   * @param {string} kind
   * @param {string} text
   */
  function setStatus(kind, text) {
    status.className = "status " + kind;
    status.textContent = text;
  }

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(draw);
  }

  function draw() {
    scheduled = false;
    const atBottom = window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 120;
    for (const index of [...timeline.dirty].sort((a, b) => a - b)) {
      const turn = timeline.turns[index];
      if (turn === undefined) continue;
      const node = drawTurn(turn);
      const old = nodes[index];
      keepOpenState(old, node);
      if (old) old.replaceWith(node);
      else turnsNode.append(node);
      nodes[index] = node;
    }
    timeline.dirty.clear();
    // Each part on its own: one that fails is listed, and the others still draw.
    const failed = [drawHeading, drawTotals, drawChart].flatMap((part) => {
      try {
        part();
        return [];
      } catch (error) {
        return ["The " + part.name.replace("draw", "").toLowerCase() + " could not be drawn: " + errorText(error)];
      }
    });
    drawProblems(failed);
    // Follow a running session, as tail -f does, once the reader is at the end.
    if (drawn && atBottom) followToEnd(20);
    drawn = true;
    document.body.dataset.state = "ready";
  }

  /**
   * A turn as drawn, its stats and the problems drawing it met set on it; a turn that cannot be
   * drawn at all is drawn as that problem.
   * @param {Turn} turn
   * @returns {HTMLElement}
   */
  function drawTurn(turn) {
    try {
      turn.stats = turnStats(turn);
      const drawnTurn = renderTurn(turn, turn.stats);
      turn.problems = drawnTurn.problems;
      return drawnTurn.node;
    } catch (error) {
      const line = turn.items[0]?.line ?? 0;
      const message = "turn " + turn.number + " could not be drawn: " + errorText(error);
      turn.problems = [{ line, message }];
      return h("section.turn.problem-entry", turn.number > 0 ? { id: "turn-" + turn.number, "data-turn": turn.number } : { "data-turn": 0 }, "Line " + line + ": " + message);
    }
  }

  // Turns are laid out only near the viewport (content-visibility: auto), so the page grows as the
  // ones near the end get their real height: scroll again until its height stops changing.
  /** @param {number} frames */
  function followToEnd(frames) {
    const height = document.documentElement.scrollHeight;
    window.scrollTo(0, height);
    if (frames > 0) requestAnimationFrame(() => {
      if (document.documentElement.scrollHeight !== height || window.innerHeight + window.scrollY < height - 2) followToEnd(frames - 1);
    });
  }

  /**
   * @param {Element | undefined} old
   * @param {Element} node
   */
  function keepOpenState(old, node) {
    /** @type {Map<string, boolean>} */
    const states = new Map();
    if (old) for (const details of old.querySelectorAll("details[data-key]")) if (details instanceof HTMLDetailsElement) states.set(details.dataset.key ?? "", details.open);
    for (const details of node.querySelectorAll("details[data-key]")) {
      if (!(details instanceof HTMLDetailsElement)) continue;
      const state = states.get(details.dataset.key ?? "");
      if (state !== undefined) details.open = state;
      else if (thinkingOpen && details.classList.contains("thinking")) details.open = true;
    }
  }

  /**
   * The page's title and heading: the task (the first user message), and the file it is read from.
   */
  function drawHeading() {
    const firstTurn = timeline.turns.find((turn) => turn.number === 1);
    const first = firstTurn?.items[0];
    const task = first && first.kind === "message" && typeof first.message.content === "string" ? first.message.content.slice(0, 2000).replace(/\s+/g, " ").trim() : "";
    const workspace = workspaceOf(timeline.turns[0]);
    heading.textContent = task === "" ? file : task.length > 200 ? task.slice(0, 200) + "…" : task;
    heading.title = task === "" ? file : task;
    fill(subtitle, task !== "" && h("span.file", null, file), workspace !== undefined && h("span.workspace", { title: "workspace" }, workspace));
    document.title = (task === "" ? file : task.length > 80 ? task.slice(0, 80) + "…" : task) + " · session viewer";
  }

  /** @param {readonly string[]} failed what could not be drawn, beside the log's problems */
  function drawProblems(failed) {
    const drawing = timeline.turns.flatMap((turn) => turn.problems ?? []);
    const all = [...lineProblems, ...timeline.problems, ...drawing].sort((a, b) => a.line - b.line);
    problems.hidden = all.length === 0 && failed.length === 0 && fileProblem === undefined && partialLine === undefined;
    fill(problems,
      fileProblem !== undefined && h("div.problem", null, fileProblem),
      failed.map((text) => h("div.problem", null, text)),
      partialLine !== undefined && h("div.problem.partial", null, "Line " + partialLine.line + " is incomplete (" + formatBytes(partialLine.bytes) +
        " without an end of line): it is being written, or the writer stopped mid-line (a crash). It is shown once complete."),
      all.length > 0 && h("div.problem-title", null, plural(all.length, "problem") + " in the log; everything else is shown:"),
      h("ul", null, all.slice(0, 200).map((problem) => h("li", null, h("span.line", null, "line " + problem.line), " ", problem.message))),
      all.length > 200 && h("div", null, "… and " + (all.length - 200) + " more"));
  }

  function userTurns() {
    return timeline.turns.filter((turn) => turn.number > 0);
  }

  function drawTotals() {
    let input = 0, output = 0, cached = 0, modelCalls = 0, toolCalls = 0, errors = 0, denied = 0, pending = 0, waited = 0;
    /** @type {number | undefined} */
    let runTime;
    for (const turn of timeline.turns) {
      const stats = turn.stats;
      if (stats === undefined) continue;
      input += stats.inputTokens;
      output += stats.outputTokens;
      cached += stats.cacheReadTokens;
      modelCalls += stats.modelCalls;
      toolCalls += stats.toolCalls;
      errors += stats.errors;
      denied += stats.denied;
      pending += stats.pending;
      waited += stats.waitMs;
      if (turn.number > 0 && stats.durationMs !== undefined) runTime = (runTime ?? 0) + stats.durationMs;
    }
    /**
     * @param {string} label
     * @param {string} value
     * @param {import("./dom.js").Child} [extra]
     * @param {string} [className]
     */
    const total = (label, value, extra, className) => h("div.total" + (className ? "." + className : ""), null, h("span.total-value", null, value), h("span.total-label", null, label), extra);
    fill(totals,
      total("turns", formatCount(userTurns().length)),
      total("messages", formatCount(timeline.live.length), undefined, "messages"),
      total("model calls", formatCount(modelCalls)),
      total("tool calls", formatCount(toolCalls), [errors > 0 && h("span.flag.error", null, plural(errors, "error")), denied > 0 && h("span.flag.denied", null, denied + " denied")]),
      total("input tokens", formatTokens(input), undefined, "input"),
      total("output tokens", formatTokens(output), undefined, "output"),
      cached > 0 && total("cached input", formatTokens(cached)),
      // The turns' run times, as the chart sums them: neither the time calls waited for a human's
      // decision (shown apart) nor the time between turns counts.
      total("run time", runTime === undefined ? "–" : formatDuration(runTime), undefined, "time"),
      waited > 0 && total("waited for approval", formatDuration(waited), undefined, "waited"),
      pending > 0 && total("awaiting approval", formatCount(pending), undefined, "pending"));
  }

  function drawChart() {
    // A resize can come between a piece of the log arriving and its draw: turns not drawn yet have no stats.
    /** @type {{ number: number, stats: TurnStats }[]} */
    const drawnTurns = [];
    for (const turn of userTurns()) if (turn.stats !== undefined) drawnTurns.push({ number: turn.number, stats: turn.stats });
    renderChart(chart, drawnTurns, (number) => {
      const node = document.getElementById("turn-" + number);
      if (node) node.scrollIntoView({ block: "start" });
    });
  }

  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let resizeTimer;
  new ResizeObserver(() => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => drawn && drawChart(), 100);
  }).observe(chart);
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
