import { delay } from "../shared/abort.ts";
import type { ModelStreamEvent } from "../model/model-stream-event.ts";
import type { InvokeModel } from "../model/invoke-model.ts";
import type { JsonValue, Message, ModelMessage, Session, ToolCallMessage, ToolResultMessage } from "../session.ts";

/**
 * The offline demo model of `--provider demo`: no network, no key. For each task it lists the
 * workspace (`list`), reads README.md if there is one (`read`), then answers with a short summary
 * built from those tool results, streamed word by word. So the real tools, the rendering and the
 * session file all run as with a real model; only the thinking is scripted.
 */
export function demoModel(options: { wordDelayMs?: number } = {}): InvokeModel {
  return (_tools, session, context) => demoTurn(session, context.signal, options.wordDelayMs ?? 15);
}

async function* demoTurn(session: Session, signal: AbortSignal, wordDelayMs: number): AsyncGenerator<ModelStreamEvent> {
  const { listing, readme } = toolResultsOfTask(session.messages);
  const id = `demo_${session.messages.length}`;
  let text: string;
  let call: ToolCallMessage | undefined;
  if (listing === undefined) {
    text = "Let me look at what is in the workspace.";
    call = { type: "tool_call", id, name: "list", input: { path: ".", depth: 1 } };
  } else if (readme === undefined && listing.isError !== true && readmeName(listing) !== undefined) {
    text = `There is a ${readmeName(listing)}; let me read it.`;
    call = { type: "tool_call", id, name: "read", input: { path: readmeName(listing)!, limit: 60 } };
  } else {
    text = summary(listing, readme);
  }
  for (const word of text.split(/(?<= )/)) {
    await delay(wordDelayMs, signal);
    yield { type: "text-delta", delta: word };
  }
  const messages: ModelMessage[] = [{ role: "assistant", content: text }];
  if (call !== undefined) {
    yield { type: "tool-call-start", id: call.id, name: call.name };
    messages.push(call);
  }
  for (const message of messages) yield { type: "message", message };
  const inputTokens = Math.ceil(JSON.stringify(session.messages).length / 4);
  yield {
    type: "response-end",
    stopReason: call === undefined ? "end_turn" : "tool_use",
    usage: { inputTokens, outputTokens: Math.ceil(text.length / 4) },
  };
}

// The results of this task's list and read calls: the messages after the last user message.
function toolResultsOfTask(messages: readonly Message[]): { listing?: ToolResultMessage; readme?: ToolResultMessage } {
  const start = messages.findLastIndex((message) => "role" in message && message.role === "user");
  const names = new Map<string, string>();
  const found: { listing?: ToolResultMessage; readme?: ToolResultMessage } = {};
  for (const message of messages.slice(start + 1)) {
    if (!("type" in message)) continue;
    if (message.type === "tool_call") names.set(message.id, message.name);
    if (message.type === "tool_result" && names.get(message.id) === "list") found.listing = message;
    if (message.type === "tool_result" && names.get(message.id) === "read") found.readme = message;
  }
  return found;
}

function entries(listing: ToolResultMessage): string[] {
  // What list answers for an empty directory: a sentence, not an entry.
  if (textOf(listing.output) === ". is empty") return [];
  return textOf(listing.output)
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith(" ") && !line.startsWith("["))
    .map((line) => line.replace(/ \(not listed\)$/, ""));
}

function readmeName(listing: ToolResultMessage): string | undefined {
  return entries(listing).find((name) => /^readme(\.md|\.markdown|\.txt)?$/i.test(name));
}

function summary(listing: ToolResultMessage | undefined, readme: ToolResultMessage | undefined): string {
  if (listing === undefined || listing.isError === true)
    return `I could not list the workspace: ${listing === undefined ? "no result" : textOf(listing.output)}`;
  const all = entries(listing);
  if (all.length === 0) return `The workspace is empty.${footer}`;
  const directories = all.filter((name) => name.endsWith("/"));
  const files = all.filter((name) => !name.endsWith("/"));
  const some = (names: string[]): string => names.slice(0, 6).join(", ") + (names.length > 6 ? ", …" : "");
  const parts: string[] = [];
  if (directories.length > 0)
    parts.push(
      `${directories.length} ${directories.length === 1 ? "directory" : "directories"} (${some(directories)})`,
    );
  if (files.length > 0) parts.push(`${files.length} ${files.length === 1 ? "file" : "files"} (${some(files)})`);
  let text = `The workspace has ${all.length} ${all.length === 1 ? "entry" : "entries"} at its top level: ${parts.join(" and ")}.`;
  if (readme !== undefined && readme.isError !== true)
    text += ` ${describeReadme(textOf(readme.output), readmeName(listing) ?? "The README")}`;
  return text + footer;
}

const footer =
  "\n\n(This answer comes from the offline demo model, which only lists and reads. For a real model, set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL.)";

// The title and first sentence of a README, from read's numbered lines.
function describeReadme(numbered: string, name: string): string {
  const lines = numbered.split("\n").map((line) => line.replace(/^\s*\d+\t/, "").trim());
  const title = lines.find((line) => /^#\s/.test(line))?.replace(/^#+\s*/, "");
  const isProse = (line: string | undefined): line is string =>
    line !== undefined && line !== "" && !/^(#|!\[|\[|<|```|[-*|>] )/.test(line);
  // The first paragraph: consecutive lines of prose.
  const start = lines.findIndex(isProse);
  let prose: string | undefined;
  for (let index = start; start !== -1 && isProse(lines[index]); index++)
    prose = prose === undefined ? lines[index] : `${prose} ${lines[index]}`;
  const sentence = prose === undefined ? undefined : (/^.*?[.!?](?=\s|$)/.exec(prose)?.[0] ?? prose).slice(0, 240);
  if (title === undefined && sentence === undefined) return `${name} has no title or text I can summarize.`;
  if (title === undefined) return `${name} begins: "${sentence}"`;
  return sentence === undefined ? `${name} is titled "${title}".` : `${name} is titled "${title}": "${sentence}"`;
}

function textOf(output: JsonValue): string {
  return typeof output === "string" ? output : JSON.stringify(output);
}
