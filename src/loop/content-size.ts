import { base64Size, type ContentPart } from "../content-parts.ts";
import type { Message } from "../session.ts";
import { jsonLength } from "../shared/json-length.ts";

/**
 * Tokens an image costs a model, whatever its bytes: providers scale images down to about a
 * megapixel, which they count as roughly 1,600 tokens (Anthropic's figure; OpenAI's high detail is
 * close). Counting base64 characters instead would make a 1 MB screenshot 350,000 tokens.
 */
export const imageTokens = 1600;

/** Tokens a file (a PDF) is counted as: one per 20 bytes, at least one image's worth (a page). */
export function fileTokens(bytes: number): number {
  return Math.max(imageTokens, Math.ceil(bytes / 20));
}

/**
 * The length of a message as token estimates count it (about 4 characters a token): its JSON,
 * except that each image or file part counts as its tokens, not as its base64, and a result's
 * `output` beside its `content` (the same text again, which the model is not sent) not at all, nor
 * a code call's `programCalls` and `logs` (its program's record, never sent to a model).
 */
export function messageCharacters(whole: Message): number {
  const message = withoutProgramRecord(whole);
  const parts = contentParts(message);
  if (parts === undefined || !parts.some(isMedia)) return jsonLength(message);
  let characters = 0;
  const light = withParts(
    message,
    parts.map((part) => {
      if (!isMedia(part)) return part;
      characters += 4 * partTokens(part);
      return { type: "text", text: "" };
    }),
    "",
  );
  return characters + JSON.stringify(light).length;
}

/** Whether the message holds an image or file part (what `withoutMedia` replaces). */
export function hasMedia(message: Message): boolean {
  const parts = contentParts(message);
  return parts !== undefined && parts.some(isMedia);
}

/**
 * The message with each image and file part replaced by a short text saying what was there
 * (`[image: image/png, 48 KB, omitted]`), or undefined when it has none: what compaction keeps of
 * old images and files.
 */
export function withoutMedia(message: Message): Message | undefined {
  const parts = contentParts(message);
  if (parts === undefined || !parts.some(isMedia)) return undefined;
  return withParts(
    message,
    parts.map((part) => (isMedia(part) ? { type: "text", text: placeholder(part) } : part)),
  );
}

/** `[image: image/png, 48 KB, omitted]`, `[file: report.pdf, application/pdf, 2 MB, omitted]`, `[image: https://…, omitted]`. */
export function placeholder(part: Exclude<ContentPart, { type: "text" }>): string {
  const details: string[] = [];
  if (part.type === "file" && part.filename !== undefined) details.push(part.filename);
  if (part.mediaType !== undefined) details.push(part.mediaType);
  if ("data" in part) details.push(describeBytes(base64Size(part.data)));
  else details.push(part.url);
  return `[${part.type}: ${details.join(", ")}, omitted]`;
}

/** Bytes as people read them: `812 B`, `48 KB`, `2.0 MB`. */
export function describeBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function partTokens(part: Exclude<ContentPart, { type: "text" }>): number {
  if (part.type === "image") return imageTokens;
  return "data" in part ? fileTokens(base64Size(part.data)) : imageTokens;
}

function isMedia(part: ContentPart): part is Exclude<ContentPart, { type: "text" }> {
  return part.type !== "text";
}

// A code call's result (or the result held on it) without its program's record: the model is sent
// the output only. A copy only for a result that has a record.
function withoutProgramRecord(message: Message): Message {
  if ("role" in message) return message;
  if (message.type === "tool_result") {
    if (message.programCalls === undefined && message.logs === undefined) return message;
    const { programCalls: _calls, logs: _logs, ...sent } = message;
    return sent;
  }
  if (message.type !== "tool_call") return message;
  const held = message.heldResult;
  if (held === undefined || (held.programCalls === undefined && held.logs === undefined)) return message;
  const { programCalls: _calls, logs: _logs, ...heldResult } = held;
  return { ...message, heldResult };
}

// A call's held result (it got one while an earlier call waits for approval) is counted as the
// result it becomes.
function contentParts(message: Message): readonly ContentPart[] | undefined {
  if ("role" in message) return message.role === "user" && Array.isArray(message.content) ? message.content : undefined;
  if (message.type === "tool_call") return message.heldResult?.content;
  return message.type === "tool_result" ? message.content : undefined;
}

// `output`, when given, replaces the result's text output (the text its parts already hold).
function withParts(message: Message, parts: ContentPart[], output?: string): Message {
  if ("role" in message) return { ...message, content: parts } as Message;
  if (message.type === "tool_call" && message.heldResult !== undefined) {
    const heldResult = { ...message.heldResult, content: parts };
    if (output !== undefined) heldResult.output = output;
    return { ...message, heldResult };
  }
  if (message.type === "tool_result")
    return output === undefined ? { ...message, content: parts } : { ...message, content: parts, output };
  return message;
}
