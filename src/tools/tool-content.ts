import { assertContentPart, contentText, type ContentPart } from "../content-parts.ts";
import type { ToolResultMessage } from "../session.ts";

/**
 * Rich content a tool handler returns (text with images or files): the parts are what the model is
 * shown, and the result's `output` holds their text parts joined. Made by `toolContent`.
 */
export type ToolContent = { readonly content: ContentPart[]; readonly [toolContentBrand]: true };

// A brand, not a class: a handler built against another copy of this package is recognized too.
const toolContentBrand = Symbol.for("simple-agent-loop.toolContent");

/**
 * What a handler returns for a result with images or files:
 * `return toolContent([{ type: "text", text: "screenshot of /" }, imagePart(bytes, "image/png")])`.
 * Throws a `TypeError` naming the part when one is malformed (the call then fails as any throwing handler does).
 */
export function toolContent(parts: readonly ContentPart[]): ToolContent {
  if (!Array.isArray(parts)) throw new TypeError("toolContent takes an array of content parts");
  parts.forEach((part, index) => assertContentPart(part, `toolContent part ${index}`));
  return { content: parts.map((part) => ({ ...part })), [toolContentBrand]: true };
}

/** Whether a handler's value is rich content made by `toolContent`. Never throws. */
export function isToolContent(value: unknown): value is ToolContent {
  try {
    return (
      typeof value === "object" &&
      value !== null &&
      (value as { [toolContentBrand]?: unknown })[toolContentBrand] === true &&
      Array.isArray((value as { content?: unknown }).content)
    );
  } catch {
    return false;
  }
}

/** The result of call `id` for rich content: the parts as `content`, their text as `output`. */
export function contentResult(id: string, value: ToolContent): ToolResultMessage {
  return { type: "tool_result", id, output: contentText(value.content), content: value.content };
}
