// @ts-check
/**
 * `/assets/clipped-blocks.js`: a long output is clipped to keep the timeline dense; a click shows it
 * whole (not when selecting text), and so does Enter on it once focused (Tab reaches a block that
 * scrolls).
 */

/**
 * Listens on the timeline for clicks, Enter, hovering and focus on its output blocks.
 * @param {HTMLElement} turnsNode
 */
export function enableClippedBlocks(turnsNode) {
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
  turnsNode.addEventListener("mouseover", markClipped);
  turnsNode.addEventListener("focusin", markClipped);
}

/** @param {Element} block */
function toggleClipped(block) {
  if (block.classList.contains("expanded")) block.classList.remove("expanded");
  else if (block.classList.contains("clipped")) block.classList.add("expanded");
}

/** @param {Event} event */
function blockOf(event) {
  return event.target instanceof Element ? event.target.closest(".io-body, .text") : null;
}

/**
 * Marks the event's block clipped once it is laid out: an invisible turn (content-visibility: auto)
 * has no size yet, so blocks cannot be marked when they are drawn.
 * @param {Event} event
 */
function markClipped(event) {
  const block = blockOf(event);
  if (!(block instanceof HTMLElement) || block.classList.contains("expanded")) return;
  const clipped = block.scrollHeight > block.clientHeight + 2;
  block.classList.toggle("clipped", clipped);
  if (clipped) block.title = "Clipped: click it (or press Enter on it) to show it whole";
}
