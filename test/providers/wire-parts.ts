// Content parts read back from each provider's request body, in one shape (`WirePart`), so the
// conformance suite asserts the same thing of every adapter. Each reader follows its provider's
// documented request format; a field it does not know fails the test by showing up as undefined.
import type { WirePart } from "./conformance.ts";

type Json = Record<string, unknown>;
const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);
const object = (value: unknown): Json => (typeof value === "object" && value !== null ? (value as Json) : {});

/** `data:<type>;base64,<data>` split, or the URL as it is. */
function fromUrl(url: string): { mediaType: string; data: string } | { url: string } {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return match === null ? { url } : { mediaType: match[1]!, data: match[2]! };
}

export function anthropicParts(body: unknown): WirePart[] {
  const parts: WirePart[] = [];
  const block = (item: Json, where: WirePart["in"]): void => {
    const source = object(item.source);
    if (item.type === "text") parts.push({ in: where, kind: "text", text: item.text as string });
    else if (item.type === "image" || item.type === "document") {
      const kind = item.type === "image" ? "image" : "file";
      if (source.type === "url") parts.push({ in: where, kind, url: source.url as string });
      else parts.push({ in: where, kind, mediaType: source.media_type as string, data: source.data as string });
    } else if (item.type === "tool_result") {
      if (typeof item.content === "string") parts.push({ in: "tool", kind: "text", text: item.content });
      else for (const inner of list(item.content)) block(inner, "tool");
    }
  };
  for (const message of list(object(body).messages))
    if (message.role === "user") for (const item of list(message.content)) block(item, "user");
  return parts;
}

export function openaiChatParts(body: unknown): WirePart[] {
  const parts: WirePart[] = [];
  for (const message of list(object(body).messages)) {
    if (message.role === "tool") parts.push({ in: "tool", kind: "text", text: message.content as string });
    if (message.role !== "user") continue;
    if (typeof message.content === "string") {
      parts.push({ in: "user", kind: "text", text: message.content });
      continue;
    }
    const items = list(message.content);
    // A user message that opens by naming a tool call carries that call's images and files.
    const first = items[0];
    const attachments =
      first?.type === "text" && /^The images and files of the result of tool call /.test(first.text as string);
    for (const item of attachments ? items.slice(1) : items) {
      const where = attachments ? "tool" : "user";
      if (item.type === "text") parts.push({ in: where, kind: "text", text: item.text as string });
      else if (item.type === "image_url")
        parts.push({ in: where, kind: "image", ...fromUrl(object(item.image_url).url as string) });
      else if (item.type === "file")
        parts.push({ in: where, kind: "file", ...fromUrl(object(item.file).file_data as string) });
    }
  }
  return parts;
}

export function openaiResponsesParts(body: unknown): WirePart[] {
  const parts: WirePart[] = [];
  const inputPart = (item: Json, where: WirePart["in"]): void => {
    if (item.type === "input_text") parts.push({ in: where, kind: "text", text: item.text as string });
    else if (item.type === "input_image")
      parts.push({ in: where, kind: "image", ...fromUrl(item.image_url as string) });
    else if (item.type === "input_file")
      parts.push({
        in: where,
        kind: "file",
        ...(typeof item.file_url === "string" ? { url: item.file_url } : fromUrl(item.file_data as string)),
      });
  };
  for (const item of list(object(body).input)) {
    if (item.role === "user") {
      if (typeof item.content === "string") parts.push({ in: "user", kind: "text", text: item.content });
      else for (const inner of list(item.content)) inputPart(inner, "user");
    } else if (item.type === "function_call_output") {
      if (typeof item.output === "string") parts.push({ in: "tool", kind: "text", text: item.output });
      else for (const inner of list(item.output)) inputPart(inner, "tool");
    }
  }
  return parts;
}

export function geminiParts(body: unknown): WirePart[] {
  const parts: WirePart[] = [];
  const media = (part: Json, where: WirePart["in"]): void => {
    const inline = object(part.inlineData);
    const file = object(part.fileData);
    const kind = (mediaType: unknown): WirePart["kind"] =>
      typeof mediaType === "string" && mediaType.startsWith("image/") ? "image" : "file";
    if (part.inlineData !== undefined)
      parts.push({
        in: where,
        kind: kind(inline.mimeType),
        mediaType: inline.mimeType as string,
        data: inline.data as string,
      });
    else if (part.fileData !== undefined)
      parts.push({ in: where, kind: kind(file.mimeType), url: file.fileUri as string });
  };
  let attachments = false;
  for (const content of list(object(body).contents)) {
    if (content.role !== "user") continue;
    for (const part of list(content.parts)) {
      if (part.functionResponse !== undefined) {
        const response = object(part.functionResponse);
        parts.push({ in: "tool", kind: "text", text: object(response.response).output as string });
        for (const nested of list(response.parts)) media(nested, "tool");
      } else if (typeof part.text === "string") {
        // Before Gemini 3, a user content that names a tool call carries that call's images.
        attachments = /^The images and files of the result of tool call /.test(part.text);
        if (!attachments) parts.push({ in: "user", kind: "text", text: part.text });
      } else media(part, attachments ? "tool" : "user");
    }
    attachments = false;
  }
  return parts;
}

export function bedrockParts(body: unknown): WirePart[] {
  const parts: WirePart[] = [];
  const block = (item: Json, where: WirePart["in"]): void => {
    if (typeof item.text === "string") parts.push({ in: where, kind: "text", text: item.text });
    else if (item.image !== undefined) {
      const image = object(item.image);
      parts.push({
        in: where,
        kind: "image",
        mediaType: `image/${image.format as string}`,
        data: object(image.source).bytes as string,
      });
    } else if (item.document !== undefined) {
      const document = object(item.document);
      const mediaType = document.format === "pdf" ? "application/pdf" : `(format ${String(document.format)})`;
      parts.push({ in: where, kind: "file", mediaType, data: object(document.source).bytes as string });
    } else if (item.toolResult !== undefined) {
      for (const inner of list(object(item.toolResult).content)) block(inner, "tool");
    }
  };
  for (const message of list(object(body).messages))
    if (message.role === "user") for (const item of list(message.content)) block(item, "user");
  return parts;
}
