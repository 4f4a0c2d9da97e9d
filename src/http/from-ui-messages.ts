import { contentProblem, type ContentPart } from "../content-parts.ts";
import { AgentError } from "../errors.ts";
import {
  maxMessageDepth,
  valueNestedDeeperThan,
  type JsonObject,
  type JsonValue,
  type Message,
  type Session,
  type ToolCallMessage,
  type ToolResultMessage,
} from "../session.ts";

/**
 * The messages an AI SDK page posts (`useChat`'s `UIMessage`s, `ai` 6 and 7) as a session, so a
 * `useChat` page can drive the loop: a system message's text becomes the system prompt; a user
 * message's text parts its content (joined by a blank line), or, with files, its parts in order (a
 * `data:` URL as base64 `data`, a link as `url`; `image/*` as images); an assistant message's parts, step
 * by step (`step-start` separates steps), become text, thinking and tool calls, each step's tool
 * results after its calls: an output as the result, an error or a denial as an error result. A
 * call that waits for approval keeps `approval: pending`; one the user decided
 * (`approval-responded`) keeps the decision, so running the loop on the session runs or rejects
 * it. Sources, data, files of the assistant and unknown parts are left out.
 *
 * The messages come from the client: whoever posts them decides the history the model sees and,
 * through an approved or open last call, which tool runs. Where that matters, keep the session on
 * the server (a store) and take only the new user text from the page.
 *
 * A file part given as a link (not a `data:` URL) is refused unless `options.urlParts` is `true`:
 * `useChat` sends the files a user picks as `data:` URLs, and a link from the page becomes a
 * request someone makes for whoever posted it (the adapter's download, or the provider's fetch).
 *
 * Throws an `AgentError` naming the message and part for input that is not UI messages.
 */
export function fromUIMessages(messages: unknown, options: FromUIMessagesOptions = {}): Session {
  if (!Array.isArray(messages)) throw new AgentError("fromUIMessages: expected an array of UI messages");
  if (typeof options !== "object" || options === null)
    throw new AgentError("fromUIMessages: options must be an object ({ urlParts })");
  if (options.urlParts !== undefined && typeof options.urlParts !== "boolean")
    throw new AgentError(`fromUIMessages: options.urlParts must be a boolean, not ${JSON.stringify(options.urlParts)}`);
  const urlParts = options.urlParts === true;
  const session: Session = { messages: [] };
  messages.forEach((message: unknown, index) => {
    const where = `fromUIMessages: message ${index}`;
    if (!isObject(message)) throw new AgentError(`${where} is not an object`);
    const { role, parts } = message;
    if (!Array.isArray(parts)) throw new AgentError(`${where} has no parts array`);
    if (role === "system") session.messages.push({ role: "system", content: textOf(parts, where) });
    else if (role === "user") session.messages.push({ role: "user", content: userContent(parts, where, urlParts) });
    else if (role === "assistant") session.messages.push(...assistantMessages(parts, where));
    else throw new AgentError(`${where} has role ${JSON.stringify(role)}: expected system, user or assistant`);
  });
  return session;
}

/** What `fromUIMessages` takes beside the messages. */
export type FromUIMessagesOptions = {
  /**
   * Keep a user's file part given as an http(s) link as a URL part (default `false`: such a part
   * is an `AgentError`). The adapter that downloads it still holds it to its `downloadParts` rule.
   */
  urlParts?: boolean;
};

type UiPart = { [field: string]: unknown };

function isObject(value: unknown): value is UiPart {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function textOf(parts: unknown[], where: string): string {
  const texts: string[] = [];
  parts.forEach((part, index) => {
    if (!isObject(part)) throw new AgentError(`${where}, part ${index} is not an object`);
    if (part.type === "text") texts.push(stringField(part, "text", `${where}, part ${index}`));
  });
  return texts.join("\n\n");
}

// Text alone stays a string; with files, the parts in order (text, image, file).
function userContent(parts: unknown[], where: string, urlParts: boolean): string | ContentPart[] {
  if (!parts.some((part) => isObject(part) && part.type === "file")) return textOf(parts, where);
  const content: ContentPart[] = [];
  parts.forEach((part, index) => {
    const at = `${where}, part ${index}`;
    if (!isObject(part)) throw new AgentError(`${at} is not an object`);
    if (part.type === "text") content.push({ type: "text", text: stringField(part, "text", at) });
    if (part.type === "file") content.push(filePart(part, at, urlParts));
  });
  const problem = contentProblem(content, where);
  if (problem !== undefined) throw new AgentError(`fromUIMessages: ${problem}`);
  return content;
}

/** A UI file part (a `data:` URL or a link) as an image or file content part. */
function filePart(part: UiPart, at: string, urlParts: boolean): ContentPart {
  const url = stringField(part, "url", at);
  const mediaType = stringField(part, "mediaType", at);
  const inline = /^data:([^;,]*)(;[^,]*)?,(.*)$/s.exec(url);
  if (inline === null && !/^https?:\/\//i.test(url))
    throw new AgentError(`${at}: a file's url must be a data: URL or an http(s) link`);
  if (inline === null && !urlParts)
    throw new AgentError(
      `${at}: a file given as a link is refused (pass the file as a data: URL, or fromUIMessages(messages, { urlParts: true }) to take links)`,
    );
  if (inline !== null && !(inline[2] ?? "").split(";").includes("base64"))
    throw new AgentError(`${at}: a data: URL must be base64 (";base64,")`);
  const source = inline === null ? { url, mediaType } : { mediaType, data: inline[3]! };
  if (mediaType.startsWith("image/")) return { type: "image", ...source };
  return typeof part.filename === "string"
    ? { type: "file", ...source, filename: part.filename }
    : { type: "file", ...source };
}

// One step's model messages, then its results in call order.
function assistantMessages(parts: unknown[], where: string): Message[] {
  const messages: Message[] = [];
  let results: ToolResultMessage[] = [];
  const endStep = (): void => {
    messages.push(...results);
    results = [];
  };
  parts.forEach((part, index) => {
    const at = `${where}, part ${index}`;
    if (!isObject(part)) throw new AgentError(`${at} is not an object`);
    const type = typeof part.type === "string" ? part.type : "";
    if (type === "step-start") endStep();
    else if (type === "text") pushText(messages, "assistant", stringField(part, "text", at));
    else if (type === "reasoning") pushText(messages, "thinking", stringField(part, "text", at));
    else if (type === "file")
      throw new AgentError(`${at} is a file: files are not supported by this session format yet`);
    else if (type === "dynamic-tool" || type.startsWith("tool-")) {
      const name = type === "dynamic-tool" ? stringField(part, "toolName", at) : type.slice("tool-".length);
      const { call, result } = toolMessages(part, name, at);
      messages.push(call);
      if (result !== undefined) results.push(result);
    }
  });
  endStep();
  return messages;
}

function pushText(messages: Message[], kind: "assistant" | "thinking", text: string): void {
  if (text === "") return;
  messages.push(kind === "assistant" ? { role: "assistant", content: text } : { type: "thinking", content: text });
}

function toolMessages(part: UiPart, name: string, at: string): { call: ToolCallMessage; result?: ToolResultMessage } {
  // Whoever posts the messages picks the input and output: nested past what a session may hold,
  // they would fail later as a bare RangeError wherever the session is copied or stored.
  if (valueNestedDeeperThan(part, maxMessageDepth))
    throw new AgentError(`${at} nests more than ${maxMessageDepth} levels deep`);
  const id = stringField(part, "toolCallId", at);
  const input: JsonObject = isObject(part.input) ? (part.input as JsonObject) : {};
  const call: ToolCallMessage = { type: "tool_call", id, name, input };
  const approval = isObject(part.approval) ? part.approval : undefined;
  const reason = typeof approval?.reason === "string" ? approval.reason : undefined;
  switch (part.state) {
    case "output-available":
      return { call, result: { type: "tool_result", id, output: (part.output ?? null) as JsonValue } };
    case "output-error":
      return { call, result: { type: "tool_result", id, output: stringField(part, "errorText", at), isError: true } };
    case "output-denied":
      return {
        call,
        result: {
          type: "tool_result",
          id,
          output: `Rejected: ${reason ?? "the call was not approved"}`,
          isError: true,
        },
      };
    case "approval-requested":
      call.approval = { status: "pending" };
      return { call };
    case "approval-responded":
      if (typeof approval?.approved !== "boolean")
        throw new AgentError(`${at} is approval-responded without approval.approved (true or false)`);
      // The decision was taken for the input the page showed: bound to it, as `resolveApproval` binds one.
      call.approval = {
        status: approval.approved ? "approved" : "denied",
        ...(reason === undefined ? {} : { reason }),
        input: structuredClone(input),
      };
      return { call };
    default:
      return { call };
  }
}

function stringField(part: UiPart, field: string, at: string): string {
  const value = part[field];
  if (typeof value !== "string") throw new AgentError(`${at} needs ${field} (a string)`);
  return value;
}
