// @ts-check
/**
 * `/assets/app.js`: the page's entry. Asks `/api/target` what it serves: one log (shown at once)
 * or a directory (a list of logs from `/api/sessions`; `?file=NAME` shows one). A shown log is read
 * from `/api/events` (Server-Sent Events): the whole log, in pieces, then each change, drawn as it
 * comes; only the turns a change touches are redrawn (see `session-view.js`).
 */
import { h, errorText } from "./dom.js";
import { getJson } from "./get-json.js";
import { showList } from "./list-view.js";
import { textOf } from "./render.js";
import { setPrices } from "./model-cost.js";
import { showSession } from "./session-view.js";
import { takeTokenFromAddress } from "./token.js";

const root = /** @type {HTMLElement} */ (document.getElementById("app"));

start().catch((error) => {
  root.replaceChildren(
    h("div.problems", { role: "alert" }, h("strong", null, "The viewer could not start: "), errorText(error)),
  );
});

async function start() {
  takeTokenFromAddress();
  const target = await getJson("/api/target");
  setPrices(target.prices);
  const name = textOf(target.name);
  const file = new URLSearchParams(location.search).get("file");
  if (target.mode === "file") return showSession(root, name, undefined);
  if (file !== null) return showSession(root, file, name);
  showList(root, await getJson("/api/sessions"));
}
