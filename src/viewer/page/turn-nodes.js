// @ts-check
/**
 * `/assets/turn-nodes.js`: the timeline's turns as elements. A turn is drawn again whenever the log
 * changes it; what the reader opened or closed in it (its `details`) stays as it was.
 */
import { h, errorText } from "./dom.js";
import { renderTurn } from "./render.js";
import { turnStats } from "./turn-stats.js";

/** @typedef {import("./timeline.js").Timeline} Timeline */
/** @typedef {import("./timeline.js").Turn} Turn */

/**
 * Draws the turns changed since the last draw (`timeline.dirty`, then cleared) in place of their old
 * elements, or at the end for a new turn. `turnNodes[i]` is turn i as drawn; `thinkingOpen`: a
 * thinking block the reader has not touched is drawn open.
 * @param {HTMLElement} turnsNode
 * @param {{ timeline: Timeline, turnNodes: HTMLElement[], thinkingOpen: boolean }} state
 */
export function drawTurns(turnsNode, state) {
  const { timeline } = state;
  for (const index of [...timeline.dirty].sort((a, b) => a - b)) {
    const turn = timeline.turns[index];
    if (turn === undefined) continue;
    const node = drawTurn(turn);
    const old = state.turnNodes[index];
    keepOpenState(old, node, state.thinkingOpen);
    if (old) old.replaceWith(node);
    else turnsNode.append(node);
    state.turnNodes[index] = node;
  }
  timeline.dirty.clear();
}

/**
 * Opens or closes every thinking block drawn.
 * @param {HTMLElement} turnsNode
 * @param {boolean} open
 */
export function showThinking(turnsNode, open) {
  for (const details of turnsNode.querySelectorAll("details.thinking"))
    if (details instanceof HTMLDetailsElement) details.open = open;
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
    return h(
      "section.turn.problem-entry",
      turn.number > 0 ? { id: "turn-" + turn.number, "data-turn": turn.number } : { "data-turn": 0 },
      "Line " + line + ": " + message,
    );
  }
}

/**
 * @param {Element | undefined} old
 * @param {Element} node
 * @param {boolean} thinkingOpen
 */
function keepOpenState(old, node, thinkingOpen) {
  /** @type {Map<string, boolean>} */
  const states = new Map();
  if (old)
    for (const details of old.querySelectorAll("details[data-key]"))
      if (details instanceof HTMLDetailsElement) states.set(details.dataset.key ?? "", details.open);
  for (const details of node.querySelectorAll("details[data-key]")) {
    if (!(details instanceof HTMLDetailsElement)) continue;
    const state = states.get(details.dataset.key ?? "");
    if (state !== undefined) details.open = state;
    else if (thinkingOpen && details.classList.contains("thinking")) details.open = true;
  }
}
