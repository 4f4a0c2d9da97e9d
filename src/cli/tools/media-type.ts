/** The media the file tools and attachments send to the model as parts, not as text. */
export type SniffedMedia = "image/png" | "image/jpeg" | "image/gif" | "image/webp" | "application/pdf";

/** How many leading bytes `sniffMedia` looks at. */
export const sniffBytes = 16;

/**
 * The media type of a file from its first bytes (at least `sniffBytes` where the file has them):
 * PNG, JPEG, GIF, WebP or PDF by their signatures, else undefined. The name's extension is not
 * asked: a `.png` that holds text is text, and a screenshot saved without an extension is an image.
 */
export function sniffMedia(head: Uint8Array): SniffedMedia | undefined {
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
