import { base64Size, type ContentPart } from "../content-parts.ts";
import { describeBytes } from "../loop/content-size.ts";
import type { Style } from "./ansi.ts";
import { visibleLine } from "./visible-text.ts";

/** A file a user message carries: its name, media type and size in bytes (unknown for a URL). */
export type Attachment = { name: string; mediaType: string; bytes?: number };

/**
 * The files a user message attaches, read from its parts as `taskContent` builds them: an image or
 * PDF part (named by the text part before it, `shot.png: image/png, 48 KB`, or its filename), and
 * a text file between its `[file name]` and `[end of name]` lines. The same for a message just
 * made and one read back from a stored session (untrusted: names are shown escaped by the caller).
 */
export function attachmentsOf(content: string | readonly ContentPart[]): Attachment[] {
  if (typeof content === "string") return [];
  const found: Attachment[] = [];
  for (const [index, part] of content.entries()) {
    if (part.type === "text") {
      const text = /^\[file ([^\n]+)\]\n([^]*)\n\[end of \1\]$/.exec(part.text);
      if (text !== null) found.push({ name: text[1]!, mediaType: "text/plain", bytes: Buffer.byteLength(text[2]!) });
      continue;
    }
    const before = content[index - 1];
    const named = before?.type === "text" ? /^([^\n]+): [\w.+-]+\/[\w.+-]+, [^\n]*$/.exec(before.text)?.[1] : undefined;
    const filename = part.type === "file" ? part.filename : undefined;
    const name = filename ?? named ?? ("url" in part ? part.url : part.type);
    const mediaType = part.mediaType ?? "from a URL";
    found.push("data" in part ? { name, mediaType, bytes: base64Size(part.data) } : { name, mediaType });
  }
  return found;
}

/** One dim line per attachment (`  ⎘ shot.png · image/png · 48 KB`), or "" when there is none. */
export function describeAttachments(content: string | readonly ContentPart[], style: Style): string {
  return attachmentsOf(content)
    .map(({ name, mediaType, bytes }) =>
      style.dim(
        `  ⎘ ${visibleLine(name)} · ${visibleLine(mediaType)}${bytes === undefined ? "" : ` · ${describeBytes(bytes)}`}\n`,
      ),
    )
    .join("");
}
