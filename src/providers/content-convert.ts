import type { ContentPart } from "../content-parts.ts";
import { unsupportedPartError } from "./convert-shared.ts";

/** A part with its bytes in the session (base64), as opposed to text or a URL. */
export type DataPart = Extract<ContentPart, { data: string }>;

/** A part the provider is to fetch from a URL. */
export type UrlPart = Extract<ContentPart, { url: string }>;

/** Whether a part holds base64 data. */
export function isDataPart(part: ContentPart): part is DataPart {
  return part.type !== "text" && "data" in part;
}

/** Whether a part names a URL. */
export function isUrlPart(part: ContentPart): part is UrlPart {
  return part.type !== "text" && "url" in part;
}

/** A `data:` URL of a data part: what OpenAI's APIs take for inline images and files. */
export function dataUrl(part: DataPart): string {
  return `data:${part.mediaType};base64,${part.data}`;
}

/** A media type without its parameters, lowercased (`image/PNG; q=1` → `image/png`). */
export function bareMediaType(mediaType: string | undefined): string | undefined {
  return mediaType?.split(";")[0]?.trim().toLowerCase();
}

/** The image media types every adapter's provider accepts. */
export const imageMediaTypes = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/**
 * Refuses an image part whose media type the provider cannot take (an `AgentError` naming the part
 * and the adapter). A URL part without a media type passes: the provider reads it from the response.
 */
export function checkImageType(part: ContentPart, adapter: string, where: string, accepted = imageMediaTypes): void {
  if (part.type !== "image") return;
  const mediaType = bareMediaType(part.mediaType);
  if (mediaType === undefined || accepted.includes(mediaType)) return;
  throw unsupportedPartError(adapter, part, where, `the provider takes images as ${accepted.join(", ")}`);
}

/** The text announcing a tool result's images and files where the provider takes them only in a user message. */
export function toolAttachmentsText(id: string, name: string | undefined): string {
  return `The images and files of the result of tool call ${id}${name === undefined ? "" : ` (${name})`}:`;
}

/** The error for a URL part an adapter cannot send because the provider does not fetch URLs and downloading is off. */
export function urlNotDownloadedError(adapter: string, part: ContentPart, where: string): Error {
  return unsupportedPartError(
    adapter,
    part,
    where,
    "the provider cannot fetch an arbitrary URL and downloading it is off (downloadParts: false); pass the bytes as data",
  );
}
