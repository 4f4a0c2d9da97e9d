// @ts-check
/**
 * `/assets/program-calls-view.js`: the tool calls a code-mode program started (`programCalls` on
 * its `run_code` call's result), nested under that call in start order: each one's tool, id and
 * whether it failed, with its input and what the program got a click away.
 *
 * Every field is untrusted JSON (a tool name, an input, an output): drawn as text only.
 */
import { h, plural, pretty } from "./dom.js";
import { isObject } from "./entry-check.js";
import { renderContent } from "./content-view.js";

/** @typedef {import("./entry-check.js").JsonObject} JsonObject */

/**
 * The program's calls, or null when the result records none.
 * @param {JsonObject} result
 * @param {string} key what keeps each call's open state across redraws (the result's line)
 * @returns {HTMLElement | null}
 */
export function renderProgramCalls(result, key) {
  const calls = result.programCalls;
  if (!Array.isArray(calls) || calls.length === 0) return null;
  const failed = calls.filter((call) => isObject(call) && call.isError === true).length;
  return h(
    "div.program-calls",
    null,
    h(
      "div.io-label",
      null,
      "program calls · " + plural(calls.length, "call") + (failed > 0 ? " · " + failed + " failed" : ""),
    ),
    calls.map((call, index) => renderProgramCall(call, key + "-" + index)),
  );
}

/**
 * @param {unknown} call
 * @param {string} key
 */
function renderProgramCall(call, key) {
  if (!isObject(call)) return h("div.program-call.error", null, h("pre.io-body", null, pretty(call ?? null)));
  const failed = call.isError === true;
  return h(
    "details.program-call" + (failed ? ".error" : ".ok"),
    { "data-key": "program-" + key, "data-call": text(call.id) },
    h(
      "summary.tool-head",
      null,
      h("span.tool-status", null, failed ? "✗ error" : "✓"),
      h("span.tool-name", null, text(call.name)),
      h("code.tool-id", null, text(call.id)),
    ),
    h(
      "div.tool-io",
      null,
      h("div.io.input", null, h("div.io-label", null, "input"), h("pre.io-body", null, pretty(call.input ?? null))),
      h(
        "div.io.output",
        null,
        h("div.io-label", null, failed ? "error" : "result"),
        Array.isArray(call.content)
          ? h("div.parts-body", null, renderContent(call.content))
          : h("pre.io-body", null, pretty(call.output ?? null)),
      ),
    ),
  );
}

/** @param {unknown} value */
function text(value) {
  return value === undefined ? "" : pretty(value);
}
