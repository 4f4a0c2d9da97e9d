// @ts-check
/**
 * `/assets/get-json.js`: reads one of the viewer's JSON routes, with the viewer's token in a header.
 */
import { isObject } from "./entry-check.js";
import { tokenHeaders } from "./token.js";

/**
 * The JSON object at url. Throws the server's `error` on a status that is not ok, and on a body
 * that is not a JSON object.
 * @param {string} url
 * @returns {Promise<import("./timeline.js").JsonObject>}
 */
export async function getJson(url) {
  const response = await fetch(url, { headers: { accept: "application/json", ...tokenHeaders() } });
  /** @type {unknown} */
  const body = await response.json();
  if (!isObject(body)) throw new Error(response.statusText || "not a JSON object");
  if (!response.ok) throw new Error(typeof body.error === "string" ? body.error : response.statusText);
  return body;
}
