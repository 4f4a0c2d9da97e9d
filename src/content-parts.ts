/**
 * Content parts: what a user message or a tool result holds beyond plain text (images, PDFs and
 * other files). Plain JSON like the rest of the session: binary data is base64 (no `data:`
 * prefix), or an https URL the provider (or its adapter) fetches.
 */
export type ContentPart = TextPart | ImagePart | FilePart;

export type TextPart = { type: "text"; text: string };

/** An image: base64 `data` with its `mediaType` (`image/png`…), or a `url` the provider fetches. */
export type ImagePart =
  { type: "image"; mediaType: string; data: string } | { type: "image"; url: string; mediaType?: string };

/** A document (a PDF, say): base64 `data` with its `mediaType`, or a `url`; `filename` when known. */
export type FilePart =
  | { type: "file"; mediaType: string; data: string; filename?: string }
  | { type: "file"; url: string; mediaType?: string; filename?: string };

/** An image part from bytes or from base64 (with or without a `data:` prefix, which is dropped). */
export function imagePart(data: Uint8Array | string, mediaType: string): Extract<ImagePart, { data: string }> {
  const part: Extract<ImagePart, { data: string }> = { type: "image", mediaType, data: toBase64(data) };
  assertContentPart(part, "imagePart");
  return part;
}

/** A file part (a PDF, say) from bytes or from base64; `filename` is shown to the model where the provider takes one. */
export function filePart(
  data: Uint8Array | string,
  mediaType: string,
  filename?: string,
): Extract<FilePart, { data: string }> {
  const part: Extract<FilePart, { data: string }> = { type: "file", mediaType, data: toBase64(data) };
  if (filename !== undefined) part.filename = filename;
  assertContentPart(part, "filePart");
  return part;
}

/** The text parts joined by newlines: what a reader that knows only text sees of the content. */
export function contentText(content: string | readonly ContentPart[]): string {
  if (typeof content === "string") return content;
  let text = "";
  let first = true;
  for (const part of content) {
    if (part.type !== "text") continue;
    text += first ? part.text : `\n${part.text}`;
    first = false;
  }
  return text;
}

/** Whether a part carries base64 data (as opposed to text or a URL). */
export function hasData(part: ContentPart): part is Extract<ContentPart, { data: string }> {
  return part.type !== "text" && "data" in part && typeof part.data === "string";
}

/** The number of bytes base64 `data` decodes to, computed from its length (no decoding). */
export function base64Size(data: string): number {
  let padding = 0;
  if (data.endsWith("==")) padding = 2;
  else if (data.endsWith("=")) padding = 1;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/** What is wrong with `content` as the content of a message (a string or an array of parts), or undefined when valid. */
export function contentProblem(content: unknown, where: string): string | undefined {
  if (typeof content === "string") return undefined;
  if (!Array.isArray(content)) return `${where} must be a string or an array of content parts`;
  for (let index = 0; index < content.length; index++) {
    const problem = contentPartProblem(content[index], `${where}[${index}]`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** What is wrong with one content part, naming it by `where`, or undefined when it is well formed. */
export function contentPartProblem(part: unknown, where: string): string | undefined {
  if (typeof part !== "object" || part === null || Array.isArray(part)) return `${where} must be an object`;
  const fields = part as Record<string, unknown>;
  const type = fields["type"];
  if (type !== "text" && type !== "image" && type !== "file") {
    return `${where}: unknown content part type ${describeType(type)} (expected "text", "image" or "file")`;
  }
  // Only the documented fields: a store reads a field of its own (`blob`) as a reference to bytes.
  const known: readonly string[] = partFields[type];
  const extra = Object.keys(fields).find((key) => !known.includes(key));
  if (extra !== undefined)
    return `${where}: ${type === "image" ? "an" : "a"} ${type} part has no field ${describeType(extra)} (it takes ${known.join(", ")})`;
  if (type === "text") {
    return typeof fields["text"] === "string" ? undefined : `${where}: a text part needs a string "text"`;
  }
  const hasDataField = "data" in fields && fields["data"] !== undefined;
  const hasUrlField = "url" in fields && fields["url"] !== undefined;
  if (hasDataField === hasUrlField) return `${where}: an ${type} part needs exactly one of "data" (base64) and "url"`;
  const mediaType = fields["mediaType"];
  if (mediaType !== undefined && (typeof mediaType !== "string" || !mediaTypePattern.test(mediaType))) {
    return `${where}: "mediaType" must be a media type such as "image/png" or "application/pdf"`;
  }
  // Every provider reads an image part as a picture: a page or a document sent as one is refused there.
  if (type === "image" && typeof mediaType === "string" && !/^image\//i.test(mediaType)) {
    return `${where}: an image part's "mediaType" must be an image/* type, not ${JSON.stringify(mediaType)} (a document goes in a file part)`;
  }
  if (type === "file" && fields["filename"] !== undefined && typeof fields["filename"] !== "string") {
    return `${where}: "filename" must be a string`;
  }
  if (hasDataField) {
    if (mediaType === undefined) return `${where}: an ${type} part with "data" needs its "mediaType"`;
    return base64Problem(fields["data"], where);
  }
  return urlProblem(fields["url"], where);
}

/** Throws a `TypeError` naming the part when it is malformed. */
export function assertContentPart(part: unknown, where: string): void {
  const problem = contentPartProblem(part, where);
  if (problem !== undefined) throw new TypeError(problem);
}

/** Base64 of bytes, or the base64 given (its `data:…;base64,` prefix dropped). */
export function toBase64(data: Uint8Array | string): string {
  if (typeof data === "string") {
    const comma = data.startsWith("data:") ? data.indexOf(",") : -1;
    return comma === -1 ? data : data.slice(comma + 1);
  }
  const nodeBuffer = (globalThis as { Buffer?: { from(bytes: Uint8Array): { toString(encoding: "base64"): string } } })
    .Buffer;
  if (nodeBuffer !== undefined) return nodeBuffer.from(data).toString("base64");
  // Edge runtimes: btoa over binary strings, in chunks small enough for `fromCharCode`'s arguments.
  let binary = "";
  for (let start = 0; start < data.length; start += 0x8000) {
    binary += String.fromCharCode(...data.subarray(start, start + 0x8000));
  }
  return btoa(binary);
}

/** The bytes of base64 `data`. */
export function fromBase64(data: string): Uint8Array {
  const nodeBuffer = (globalThis as { Buffer?: { from(text: string, encoding: "base64"): Uint8Array } }).Buffer;
  if (nodeBuffer !== undefined) {
    const buffer = nodeBuffer.from(data, "base64");
    return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  }
  const binary = atob(data);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

const mediaTypePattern = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*(?:\s*;.*)?$/i;
const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/;

function base64Problem(data: unknown, where: string): string | undefined {
  if (typeof data !== "string") return `${where}: "data" must be a base64 string`;
  if (data.startsWith("data:")) return `${where}: "data" must be plain base64, without a "data:" prefix`;
  if (data.length % 4 !== 0 || !base64Pattern.test(data)) return `${where}: "data" is not valid base64`;
  // Canonical: the bits past the last byte are zero, so the text is the one encoding of its bytes
  // (a store keeps the bytes, and must give back the same text).
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  if (padding > 0) {
    const last = base64Alphabet.indexOf(data[data.length - padding - 1]!);
    if ((last & (padding === 2 ? 0b1111 : 0b11)) !== 0)
      return `${where}: "data" is not canonical base64 (the bits after the last byte must be zero)`;
  }
  return undefined;
}

const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

const partFields = {
  text: ["type", "text"],
  image: ["type", "mediaType", "data", "url"],
  file: ["type", "mediaType", "data", "url", "filename"],
} as const satisfies Record<ContentPart["type"], readonly string[]>;

function urlProblem(url: unknown, where: string): string | undefined {
  if (typeof url !== "string") return `${where}: "url" must be a string`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `${where}: "url" is not a valid URL`;
  }
  if (parsed.protocol === "data:") return `${where}: a data: URL goes in "data" as base64, with its "mediaType"`;
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    return `${where}: "url" must be an https URL, not ${parsed.protocol}`;
  }
  return undefined;
}

function describeType(type: unknown): string {
  return typeof type === "string" ? JSON.stringify(type.slice(0, 40)) : typeof type;
}

/** One line of text for logs and summaries: the text parts as they are, any other part as `[image: image/png]`. */
export function describeContent(content: string | readonly ContentPart[]): string {
  if (typeof content === "string") return content;
  return content
    .map((part) => (part.type === "text" ? part.text : `[${part.type}: ${part.mediaType ?? "from a URL"}]`))
    .join(" ");
}

/** The media `sniffMediaType` recognizes: what the CLI sends as parts and the viewer shows as images. */
export type SniffedMedia = "image/png" | "image/jpeg" | "image/gif" | "image/webp" | "application/pdf";

/** How many leading bytes `sniffMediaType` looks at. */
export const sniffBytes = 16;

/**
 * The media type of bytes from the first of them (at least `sniffBytes` where the file has them):
 * PNG, JPEG, GIF, WebP or PDF by their signatures, else undefined. The name's extension is not
 * asked: a `.png` that holds text is text, and a screenshot saved without an extension is an image.
 */
export function sniffMediaType(head: Uint8Array): SniffedMedia | undefined {
  const starts = (signature: readonly number[], at = 0): boolean =>
    head.length >= at + signature.length && signature.every((byte, index) => head[at + index] === byte);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (starts([0xff, 0xd8, 0xff])) return "image/jpeg";
  if (starts(ascii("GIF87a")) || starts(ascii("GIF89a"))) return "image/gif";
  if (starts(ascii("RIFF")) && starts(ascii("WEBP"), 8)) return "image/webp";
  if (starts(ascii("%PDF-"))) return "application/pdf";
  return undefined;
}

function ascii(text: string): number[] {
  return [...text].map((character) => character.charCodeAt(0));
}
