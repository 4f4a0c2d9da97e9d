// @ts-check
/**
 * `/assets/session-view.js`: one session's page: a bar (its task, the stream's status), an overview
 * (totals and chart), the log's problems, and the turns. Each update from `/api/events` is applied
 * to the timeline when it comes and drawn at the next frame, one draw for all the updates of a
 * frame; only the turns an update touched are drawn again.
 */
import { showBlobsOf } from "./content-view.js";
import { h, errorText } from "./dom.js";
import { renderChart } from "./chart.js";
import { enableClippedBlocks } from "./clipped-blocks.js";
import { renderHeading } from "./session-heading.js";
import { renderProblems } from "./session-problems.js";
import { renderContext, renderTotals } from "./session-totals.js";
import { renderTasks } from "./task-view.js";
import { followEvents } from "./stream.js";
import { applyRecords, createTimeline } from "./timeline.js";
import { drawTurns, showThinking } from "./turn-nodes.js";

/** @typedef {import("./timeline.js").Problem} Problem */
/** @typedef {import("./timeline.js").Timeline} Timeline */
/** @typedef {import("./turn-stats.js").TurnStats} TurnStats */
/** @typedef {import("./stream.js").LogUpdate} LogUpdate */

/**
 * The elements a draw fills.
 * @typedef {{ status: HTMLElement, expand: HTMLElement, heading: HTMLElement, subtitle: HTMLElement, totals: HTMLElement, context: HTMLElement, tasks: HTMLElement, chart: HTMLElement, problems: HTMLElement, turns: HTMLElement }} SessionNodes
 */
/**
 * What the page knows of the log. `turnNodes[i]`: turn i as drawn; `lineProblems`: lines that are
 * not entries; `fileProblem`: why the log cannot be read at all; `partialLine`: the last line, still
 * being written; `drawn`: drawn once; `scheduled`: a draw waits for the next frame;
 * `thinkingOpen`: thinking is shown expanded.
 * @typedef {{ timeline: Timeline, turnNodes: HTMLElement[], lineProblems: Problem[], fileProblem: string | undefined,
 *   partialLine: { line: number, bytes: number } | undefined, drawn: boolean, scheduled: boolean, thinkingOpen: boolean }} SessionState
 */

/**
 * Shows the log `file` (a name `/api/sessions` lists) in root, live. `directoryName`: the directory
 * it was chosen from, for a link back to its list; undefined when the viewer serves only this log.
 * @param {HTMLElement} root
 * @param {string} file
 * @param {string | undefined} directoryName
 */
export function showSession(root, file, directoryName) {
  document.title = file + " · session viewer";
  showBlobsOf(file);
  const nodes = buildPage(root, file, directoryName);
  /** @type {SessionState} */
  const state = {
    timeline: createTimeline(),
    turnNodes: [],
    lineProblems: [],
    fileProblem: undefined,
    partialLine: undefined,
    drawn: false,
    scheduled: false,
    thinkingOpen: false,
  };
  enableClippedBlocks(nodes.turns);
  nodes.expand.addEventListener("click", () => {
    state.thinkingOpen = !state.thinkingOpen;
    nodes.expand.textContent = state.thinkingOpen ? "Collapse thinking" : "Expand thinking";
    showThinking(nodes.turns, state.thinkingOpen);
  });
  const schedule = () => {
    if (state.scheduled) return;
    state.scheduled = true;
    requestAnimationFrame(() => draw(nodes, state, file));
  };
  followEvents("/api/events?" + new URLSearchParams({ file }).toString(), {
    onOpen: () => setStatus(nodes.status, "live", "live"),
    onBroken: () => setStatus(nodes.status, "reconnecting", "reconnecting…"),
    onRefused: (message) => {
      setStatus(nodes.status, "reconnecting", "not available");
      state.fileProblem = message;
      schedule();
    },
    onUpdate: (update) => {
      applyUpdate(state, nodes.turns, update);
      setStatus(nodes.status, "live", "live · updated " + new Date().toLocaleTimeString("en-GB", { hour12: false }));
      schedule();
    },
  });
  redrawChartOnResize(nodes.chart, state);
}

/**
 * @param {HTMLElement} root
 * @param {string} file
 * @param {string | undefined} directoryName
 * @returns {SessionNodes}
 */
function buildPage(root, file, directoryName) {
  /** @type {SessionNodes} */
  const nodes = {
    status: h("span.status.connecting", null, "connecting…"),
    expand: h("button.toggle", { type: "button" }, "Expand thinking"),
    heading: h("h1", { title: file }, file),
    subtitle: h("span.subtitle", null, file),
    totals: h("div.totals", null),
    context: h("div.context-usage", null),
    tasks: h("div.tasks", { hidden: true }),
    chart: h("div.chart", null),
    problems: h("div.problems", { role: "alert", hidden: true }),
    turns: h("main.timeline", null),
  };
  root.replaceChildren(
    h(
      "header.bar",
      null,
      directoryName !== undefined && h("a.back", { href: location.pathname }, "← " + directoryName),
      h("div.heading", null, nodes.heading, nodes.subtitle),
      nodes.status,
      nodes.expand,
    ),
    h("section.overview", null, nodes.totals, nodes.context, nodes.tasks, nodes.chart),
    nodes.problems,
    nodes.turns,
  );
  return nodes;
}

/**
 * @param {HTMLElement} status
 * @param {string} kind
 * @param {string} text
 */
function setStatus(status, kind, text) {
  status.className = "status " + kind;
  status.textContent = text;
}

/**
 * Applies one update to what the page knows; a reset starts over from an empty log.
 * @param {SessionState} state
 * @param {HTMLElement} turnsNode
 * @param {LogUpdate} update
 */
function applyUpdate(state, turnsNode, update) {
  if (update.reset) {
    state.timeline = createTimeline();
    state.turnNodes = [];
    state.lineProblems = [];
    turnsNode.replaceChildren();
  }
  state.fileProblem = update.missing
    ? "There is no file at this path (any more). Waiting for it to appear."
    : update.reset
      ? undefined
      : state.fileProblem;
  state.partialLine = update.partial;
  for (const problem of update.problems) {
    if (problem.line === undefined) state.fileProblem = problem.message;
    else state.lineProblems.push({ line: problem.line, message: problem.message });
  }
  applyRecords(state.timeline, update.records);
}

/**
 * Draws what changed since the last draw: the changed turns, then the heading, totals and chart,
 * each on its own (one that fails is listed with the log's problems, and the others still draw).
 * @param {SessionNodes} nodes
 * @param {SessionState} state
 * @param {string} file
 */
function draw(nodes, state, file) {
  state.scheduled = false;
  const atBottom = window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 120;
  const { timeline } = state;
  drawTurns(nodes.turns, state);
  nodes.turns.classList.toggle("whole", isOrdinarySize(timeline));
  /** @type {[name: string, drawPart: () => void][]} */
  const parts = [
    ["heading", () => renderHeading(nodes, timeline, file)],
    ["totals", () => renderTotals(nodes.totals, timeline)],
    ["context", () => renderContext(nodes.context, timeline)],
    ["task list", () => renderTasks(nodes.tasks, timeline)],
    ["chart", () => drawChart(nodes.chart, timeline)],
  ];
  const failed = parts.flatMap(([name, drawPart]) => {
    try {
      drawPart();
      return [];
    } catch (error) {
      return ["The " + name + " could not be drawn: " + errorText(error)];
    }
  });
  renderProblems(nodes.problems, state, failed);
  // Follow a running session, as tail -f does, once the reader is at the end.
  if (state.drawn && atBottom) followToEnd(20);
  state.drawn = true;
  document.body.dataset.state = "ready";
}

/**
 * A session this page draws whole, every turn rendered even out of view (for a capture of the
 * whole page): up to `wholeItems` items. Past that, turns out of view are skipped
 * (content-visibility: auto), except in print.
 * @param {Timeline} timeline
 */
function isOrdinarySize(timeline) {
  let items = 0;
  for (const turn of timeline.turns) {
    items += turn.items.length;
    if (items > wholeItems) return false;
  }
  return true;
}

const wholeItems = 1500;

/**
 * The chart of the user turns drawn so far: a resize can come between a piece of the log arriving
 * and its draw, and turns not drawn yet have no stats.
 * @param {HTMLElement} chart
 * @param {Timeline} timeline
 */
function drawChart(chart, timeline) {
  /** @type {{ number: number, stats: TurnStats }[]} */
  const drawnTurns = [];
  for (const turn of timeline.turns)
    if (turn.number > 0 && turn.stats !== undefined) drawnTurns.push({ number: turn.number, stats: turn.stats });
  renderChart(chart, drawnTurns, (number) => {
    const node = document.getElementById("turn-" + number);
    if (node) node.scrollIntoView({ block: "start" });
  });
}

/**
 * The chart fits its width: drawn again once a resize has settled, when the page has drawn.
 * @param {HTMLElement} chart
 * @param {SessionState} state
 */
function redrawChartOnResize(chart, state) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let resizeTimer;
  new ResizeObserver(() => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => state.drawn && drawChart(chart, state.timeline), 100);
  }).observe(chart);
}

/**
 * Scrolls to the end. Turns are laid out only near the viewport (content-visibility: auto), so the
 * page grows as the ones near the end get their real height: scroll again until its height stops
 * changing, for at most `frames` frames.
 * @param {number} frames
 */
function followToEnd(frames) {
  const height = document.documentElement.scrollHeight;
  window.scrollTo(0, height);
  if (frames > 0)
    requestAnimationFrame(() => {
      if (document.documentElement.scrollHeight !== height || window.innerHeight + window.scrollY < height - 2)
        followToEnd(frames - 1);
    });
}
