// @ts-check
/**
 * `/assets/content-view.js`: the content parts of a user message or a tool result. Text is drawn as
 * text; a PNG, JPEG, GIF or WebP image as a thumbnail (a click shows it at full size, another click
 * makes it small again); any other part (a PDF, an SVG, an image of another type) as its name, type
 * and size with a link that downloads it, never drawn in the page; a URL part as its address, never
 * fetched. Bytes come from the part's own base64, or, for a part the file store keeps as a blob
 * (`blob: <sha256>`), from `/api/blob` with the viewer's token in a header: images are then shown
 * through object URLs, each blob fetched once per page.
 */
import { h, formatBytes, errorText, pretty } from "./dom.js";
import { isObject } from "./entry-check.js";
import { tokenHeaders } from "./token.js";

/** The log whose blobs `/api/blob` is asked for. */
let blobSource = "";

/**
 * Sets the log (a name `/api/sessions` lists) whose blob directory the parts' blobs are read from.
 * @param {string} file
 */
export function showBlobsOf(file) {
  blobSource = file;
}

/** The images a browser draws without running anything. */
const drawnTypes = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/**
 * The parts as DOM, in order.
 * @param {readonly unknown[]} parts
 * @returns {HTMLElement}
 */
export function renderContent(parts) {
  return h("div.parts", null, parts.map(renderPart));
}

/**
 * @typedef {{ kind: string, mediaType: string | undefined, filename: string | undefined,
 *   hash: string | undefined, data: string | undefined, url: string | undefined }} PartFields
 */

/** @param {unknown} part */
function renderPart(part) {
  if (!isObject(part)) return h("pre.io-body", null, pretty(part));
  if (part.type === "text") return h("div.text", null, typeof part.text === "string" ? part.text : pretty(part.text));
  /** @type {PartFields} */
  const fields = {
    kind: part.type === "image" ? "image" : part.type === "file" ? "file" : "part",
    mediaType: typeof part.mediaType === "string" ? part.mediaType.slice(0, 100) : undefined,
    filename: typeof part.filename === "string" ? part.filename.slice(0, 300) : undefined,
    hash: typeof part.blob === "string" && /^[0-9a-f]{64}$/.test(part.blob) ? part.blob : undefined,
    data: typeof part.data === "string" && /^[A-Za-z0-9+/]*={0,2}$/.test(part.data) ? part.data : undefined,
    url: typeof part.url === "string" ? part.url.slice(0, 2000) : undefined,
  };
  if (fields.kind === "image" && fields.mediaType !== undefined && drawnTypes.has(fields.mediaType))
    if (fields.hash !== undefined || fields.data !== undefined) return thumbnail(fields);
  return fileLine(fields);
}

/** @param {PartFields} fields */
function thumbnail(fields) {
  const caption = h("figcaption", null, fields.mediaType ?? "");
  const image = h("img", { alt: "an image (" + (fields.mediaType ?? "") + ")", title: "click for full size" });
  const figure = h("figure.thumb", null, image, caption);
  image.addEventListener("click", () => figure.classList.toggle("full"));
  if (fields.data !== undefined) {
    image.setAttribute("src", "data:" + fields.mediaType + ";base64," + fields.data);
    caption.textContent = (fields.mediaType ?? "") + " · " + formatBytes(base64Bytes(fields.data));
    return figure;
  }
  blobUrl(/** @type {string} */ (fields.hash)).then(
    ({ url, size }) => {
      image.setAttribute("src", url);
      caption.textContent = (fields.mediaType ?? "") + " · " + formatBytes(size);
    },
    (error) => {
      figure.classList.add("missing");
      caption.textContent = (fields.mediaType ?? "") + " · could not be loaded: " + errorText(error);
    },
  );
  return figure;
}

/** @param {PartFields} fields */
function fileLine(fields) {
  const size = h("span.part-size", null, fields.data !== undefined ? formatBytes(base64Bytes(fields.data)) : "");
  const hash = fields.hash;
  const data = fields.data;
  const name = fields.filename ?? (fields.kind === "image" ? "image" : "file");
  /** @type {HTMLElement | false} */
  let link = false;
  if (hash !== undefined || data !== undefined) {
    link = h("a.part-download", { href: "#", title: "download " + name }, "download");
    link.addEventListener("click", (event) => {
      event.preventDefault();
      download(name, hash, data).catch((error) => (size.textContent = "could not be loaded: " + errorText(error)));
    });
  }
  if (hash !== undefined)
    blobSize(hash).then(
      (bytes) => (size.textContent = formatBytes(bytes)),
      () => (size.textContent = "missing"),
    );
  return h(
    "div.part-file",
    null,
    h("span.part-kind", null, fields.kind),
    h("span.part-name", null, name),
    h("span.part-type", null, fields.mediaType ?? "type unknown"),
    size,
    fields.url !== undefined && h("code.part-url", null, fields.url),
    link,
  );
}

/** @type {Map<string, Promise<{ url: string, size: number }>>} */
const fetched = new Map();

/**
 * An object URL of the blob, fetched once per page (a live page redraws turns often).
 * @param {string} hash
 */
function blobUrl(hash) {
  const key = blobSource + "\n" + hash;
  let pending = fetched.get(key);
  if (pending === undefined) {
    pending = fetch(blobAddress(hash), { headers: tokenHeaders() }).then(async (response) => {
      if (!response.ok) throw new Error(response.status + " " + response.statusText);
      const blob = await response.blob();
      return { url: URL.createObjectURL(blob), size: blob.size };
    });
    pending.catch(() => fetched.delete(key));
    fetched.set(key, pending);
  }
  return pending;
}

/** @param {string} hash */
async function blobSize(hash) {
  const response = await fetch(blobAddress(hash), { method: "HEAD", headers: tokenHeaders() });
  if (!response.ok) throw new Error(response.status + " " + response.statusText);
  return Number(response.headers.get("content-length"));
}

/**
 * Saves the part as a file named `name` (the browser's download, never a page of the viewer).
 * @param {string} name
 * @param {string | undefined} hash
 * @param {string | undefined} data
 */
async function download(name, hash, data) {
  const url =
    hash !== undefined
      ? (await blobUrl(hash)).url
      : URL.createObjectURL(new Blob([Uint8Array.from(atob(data ?? ""), (character) => character.charCodeAt(0))]));
  const anchor = h("a", { href: url, download: name });
  anchor.click();
}

/** @param {string} hash */
function blobAddress(hash) {
  return "/api/blob?" + new URLSearchParams({ file: blobSource, hash }).toString();
}

/** @param {string} data */
function base64Bytes(data) {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}
