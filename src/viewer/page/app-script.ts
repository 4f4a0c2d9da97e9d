/**
 * `/assets/app.js`: the page's entry. Asks `/api/target` what it serves: one log (shown at once)
 * or a directory (a list of logs from `/api/sessions`; `?file=NAME` shows one). A shown log is read
 * from `/api/events` (Server-Sent Events): the whole log, in pieces, then each change, drawn as it
 * comes; only the turns a change touches are redrawn.
 */
export const appScript = String.raw`
import { h, fill, formatAgo, formatBytes, formatCount, formatDateTime, formatDuration, formatTokens, timeOf, plural } from "./dom.js";
import { applyRecords, createTimeline, turnStats } from "./timeline.js";
import { renderTurn } from "./render.js";
import { renderChart } from "./chart.js";
import { followEvents } from "./stream.js";

const root = document.getElementById("app");

start().catch((error) => {
  root.replaceChildren(h("div.problems", { role: "alert" }, h("strong", "The viewer could not start: "), String(error && error.message ? error.message : error)));
});

async function start() {
  const target = await getJson("/api/target");
  const file = new URLSearchParams(location.search).get("file");
  if (target.mode === "file") return showSession(target.name, undefined);
  if (file !== null) return showSession(file, target.name);
  showList(await getJson("/api/sessions"));
}

async function getJson(url) {
  const response = await fetch(url, { headers: { accept: "application/json" } });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function showList(info) {
  document.title = info.name + " · sessions";
  const body = h("tbody");
  const count = h("span.status");
  root.replaceChildren(
    h("header.bar", h("h1", info.name), count),
    h("main.list", h("table.sessions", null,
      h("thead", null, h("tr", null, h("th", "Session"), h("th", "First message"), h("th.num", "Messages"), h("th", "Last activity"), h("th.num", "Size"))),
      body)));
  const fill = (sessions) => {
    const now = Date.now();
    count.textContent = plural(sessions.length, "session");
    body.replaceChildren(...sessions.map((session) => {
      const href = "?" + new URLSearchParams({ file: session.file });
      const at = timeOf(session.lastActivity);
      return h("tr", { "data-file": session.file, onclick: (event) => { if (!event.target.closest("a")) location.href = href; } },
        h("td", h("a.session-link", { href }, session.file), session.problems > 0 && h("span.flag.error", { title: "lines that could not be read" }, plural(session.problems, "bad line"))),
        h("td.title", session.title),
        h("td.num", formatCount(session.messages)),
        h("td", { title: formatDateTime(at) }, at === undefined ? "" : formatAgo(at, now)),
        h("td.num", formatBytes(session.size)));
    }));
    if (sessions.length === 0) body.append(h("tr", null, h("td.empty", { colspan: 5 }, "No *.jsonl session logs in this directory yet.")));
  };
  fill(info.sessions);
  // New and growing sessions show up without a reload.
  setInterval(() => {
    if (document.visibilityState === "visible") getJson("/api/sessions").then((next) => fill(next.sessions), () => {});
  }, 5000);
}

function showSession(file, directoryName) {
  document.title = file + " · session viewer";
  const status = h("span.status.connecting", "connecting…");
  const expand = h("button.toggle", { type: "button" }, "Expand thinking");
  const totals = h("div.totals");
  const chart = h("div.chart");
  const problems = h("div.problems", { role: "alert", hidden: true });
  const turnsNode = h("main.timeline");
  root.replaceChildren(
    h("header.bar", directoryName !== undefined && h("a.back", { href: location.pathname }, "← " + directoryName), h("h1", file), status, expand),
    h("section.overview", totals, chart),
    problems,
    turnsNode);

  let timeline = createTimeline();
  let nodes = [];
  let lineProblems = [];
  let fileProblem;
  let partialLine;
  let drawn = false;
  let scheduled = false;
  let thinkingOpen = false;

  // A long output is clipped to keep the timeline dense; a click shows it whole (not when selecting text),
  // and so does Enter on it once focused (Tab reaches a block that scrolls).
  const toggleClipped = (block) => {
    if (block.classList.contains("expanded")) block.classList.remove("expanded");
    else if (block.classList.contains("clipped")) block.classList.add("expanded");
  };
  turnsNode.addEventListener("click", (event) => {
    const block = event.target.closest(".io-body, .text");
    if (block && getSelection().isCollapsed) toggleClipped(block);
  });
  turnsNode.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || !event.target.matches(".io-body, .text")) return;
    markClipped(event);
    toggleClipped(event.target);
  });
  // Marks clipped blocks once they are laid out (an invisible turn, content-visibility: auto, has no size yet).
  const markClipped = (event) => {
    const block = event.target.closest(".io-body, .text");
    if (!block || block.classList.contains("expanded")) return;
    const clipped = block.scrollHeight > block.clientHeight + 2;
    block.classList.toggle("clipped", clipped);
    if (clipped) block.title = "Clipped: click it (or press Enter on it) to show it whole";
  };
  turnsNode.addEventListener("mouseover", markClipped);
  turnsNode.addEventListener("focusin", markClipped);

  expand.addEventListener("click", () => {
    thinkingOpen = !thinkingOpen;
    expand.textContent = thinkingOpen ? "Collapse thinking" : "Expand thinking";
    for (const details of turnsNode.querySelectorAll("details.thinking")) details.open = thinkingOpen;
  });

  followEvents("/api/events?" + new URLSearchParams({ file }), {
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
        else lineProblems.push(problem);
      }
      applyRecords(timeline, update.records);
      setStatus("live", "live · updated " + new Date().toLocaleTimeString("en-GB", { hour12: false }));
      schedule();
    },
  });

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
      turn.stats = turnStats(turn);
      const node = renderTurn(turn, turn.stats);
      const old = nodes[index];
      keepOpenState(old, node);
      if (old) old.replaceWith(node);
      else turnsNode.append(node);
      nodes[index] = node;
    }
    timeline.dirty.clear();
    drawProblems();
    drawTotals();
    drawChart();
    // Follow a running session, as tail -f does, once the reader is at the end.
    if (drawn && atBottom) followToEnd(20);
    drawn = true;
    document.body.dataset.state = "ready";
  }

  // Turns are laid out only near the viewport (content-visibility: auto), so the page grows as the
  // ones near the end get their real height: scroll again until its height stops changing.
  function followToEnd(frames) {
    const height = document.documentElement.scrollHeight;
    window.scrollTo(0, height);
    if (frames > 0) requestAnimationFrame(() => {
      if (document.documentElement.scrollHeight !== height || window.innerHeight + window.scrollY < height - 2) followToEnd(frames - 1);
    });
  }

  function keepOpenState(old, node) {
    const states = new Map();
    if (old) for (const details of old.querySelectorAll("details[data-key]")) states.set(details.dataset.key, details.open);
    for (const details of node.querySelectorAll("details[data-key]")) {
      const state = states.get(details.dataset.key);
      if (state !== undefined) details.open = state;
      else if (thinkingOpen && details.classList.contains("thinking")) details.open = true;
    }
  }

  function drawProblems() {
    const all = [...lineProblems, ...timeline.problems].sort((a, b) => a.line - b.line);
    problems.hidden = all.length === 0 && fileProblem === undefined && partialLine === undefined;
    fill(problems,
      fileProblem !== undefined && h("div.problem", fileProblem),
      partialLine !== undefined && h("div.problem.partial", "Line " + partialLine.line + " is incomplete (" + formatBytes(partialLine.bytes) +
        " without an end of line): it is being written, or the writer stopped mid-line (a crash). It is shown once complete."),
      all.length > 0 && h("div.problem-title", plural(all.length, "line") + " of the log could not be shown; everything else is:"),
      h("ul", null, all.slice(0, 200).map((problem) => h("li", h("span.line", "line " + problem.line), " ", problem.message))),
      all.length > 200 && h("div", "… and " + (all.length - 200) + " more"));
  }

  function userTurns() {
    return timeline.turns.filter((turn) => turn.number > 0);
  }

  function drawTotals() {
    let input = 0, output = 0, cached = 0, modelCalls = 0, toolCalls = 0, errors = 0, pending = 0, start, end;
    for (const turn of timeline.turns) {
      const stats = turn.stats;
      input += stats.inputTokens;
      output += stats.outputTokens;
      cached += stats.cacheReadTokens;
      modelCalls += stats.modelCalls;
      toolCalls += stats.toolCalls;
      errors += stats.errors;
      pending += stats.pending;
      if (stats.start !== undefined && (start === undefined || stats.start < start)) start = stats.start;
      if (stats.end !== undefined && (end === undefined || stats.end > end)) end = stats.end;
    }
    const total = (label, value, extra, className) => h("div.total" + (className ? "." + className : ""), h("span.total-value", value), h("span.total-label", label), extra);
    fill(totals,
      total("turns", formatCount(userTurns().length)),
      total("messages", formatCount(timeline.live.length), undefined, "messages"),
      total("model calls", formatCount(modelCalls)),
      total("tool calls", formatCount(toolCalls), errors > 0 && h("span.flag.error", plural(errors, "error"))),
      total("input tokens", formatTokens(input), undefined, "input"),
      total("output tokens", formatTokens(output), undefined, "output"),
      cached > 0 && total("cached input", formatTokens(cached)),
      total("wall time", start === undefined ? "–" : formatDuration(end - start), undefined, "time"),
      pending > 0 && total("awaiting approval", formatCount(pending), undefined, "pending"));
  }

  function drawChart() {
    // A resize can come between a piece of the log arriving and its draw: turns not drawn yet have no stats.
    const drawnTurns = userTurns().filter((turn) => turn.stats !== undefined);
    renderChart(chart, drawnTurns.map((turn) => ({ number: turn.number, stats: turn.stats })), (number) => {
      const node = document.getElementById("turn-" + number);
      if (node) node.scrollIntoView({ block: "start" });
    });
  }

  let resizeTimer;
  new ResizeObserver(() => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => drawn && drawChart(), 100);
  }).observe(chart);
}
`;
