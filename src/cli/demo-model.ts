import { delay } from "../shared/abort.ts";
import type { ModelStreamEvent } from "../model/model-stream-event.ts";
import type { InvokeModel } from "../model/invoke-model.ts";
import type { JsonValue, Message, ModelMessage, Session, ToolCallMessage, ToolResultMessage } from "../session.ts";

/**
 * The offline demo model of `--provider demo`: no network, no key. For each task it lists the
 * folder the task names (`list`; "the docs folder", `src/`; else the workspace), reads the file
 * the task names (`read`; `package.json`, `docs/cli.md`; else a README of the folder listed),
 * then answers with a short summary built from those two results, streamed word by word, and
 * says that this is all it does. So the real tools, the rendering and the session file all run as
 * with a real model; only the thinking is scripted.
 */
export function demoModel(options: { wordDelayMs?: number } = {}): InvokeModel {
  return (_tools, session, context) => demoTurn(session, context.signal, options.wordDelayMs ?? 15);
}

async function* demoTurn(session: Session, signal: AbortSignal, wordDelayMs: number): AsyncGenerator<ModelStreamEvent> {
  const { task, listing, read } = taskSoFar(session.messages);
  const named = namedInTask(task);
  const folder = named.folder ?? ".";
  const id = `demo_${session.messages.length}`;
  let text: string;
  let call: ToolCallMessage | undefined;
  const file = named.file ?? (listing === undefined ? undefined : readmeIn(listing, folder));
  if (listing === undefined) {
    text = folder === "." ? "Let me look at what is in the workspace." : `Let me list ${folder}.`;
    call = { type: "tool_call", id, name: "list", input: { path: folder, depth: 1 } };
  } else if (read === undefined && file !== undefined) {
    text = `Let me read ${file}.`;
    call = { type: "tool_call", id, name: "read", input: { path: file, limit: 60 } };
  } else {
    text = summary(folder, listing, file, read);
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

// The task (the last user message's text) and the results of its list and read calls.
function taskSoFar(messages: readonly Message[]): {
  task: string;
  listing?: ToolResultMessage;
  read?: ToolResultMessage;
} {
  const start = messages.findLastIndex((message) => "role" in message && message.role === "user");
  const user = messages[start];
  const content = user !== undefined && "role" in user ? user.content : "";
  const task =
    typeof content === "string"
      ? content
      : content.flatMap((part) => ("text" in part && typeof part.text === "string" ? [part.text] : [])).join(" ");
  const names = new Map<string, string>();
  const found: { task: string; listing?: ToolResultMessage; read?: ToolResultMessage } = { task };
  for (const message of messages.slice(start + 1)) {
    if (!("type" in message)) continue;
    if (message.type === "tool_call") names.set(message.id, message.name);
    if (message.type === "tool_result" && names.get(message.id) === "list") found.listing = message;
    if (message.type === "tool_result" && names.get(message.id) === "read") found.read = message;
  }
  return found;
}

// A path-like word: letters, digits, dots, dashes, underscores and slashes, not a URL.
const pathWord = String.raw`[\w@][\w.@-]*(?:/[\w.@-]+)*/?`;

/**
 * The folder and the file a task names, read plainly: "the docs folder", "directory src",
 * `docs/` or `src/cli/` for a folder; a word with an extension (`README.md`, `src/index.ts`)
 * for a file. Anything else names nothing, and the demo lists the workspace.
 */
export function namedInTask(task: string): { folder?: string; file?: string } {
  const named: { folder?: string; file?: string } = {};
  const folder = [
    String.raw`(?:^|\s)(?:the\s+)?(${pathWord})\s+(?:folder|directory|dir)\b`,
    String.raw`\b(?:folder|directory|dir)\s+(${pathWord})`,
    String.raw`(?:^|\s)(${pathWord}/)(?=$|[\s,.;:!?])`,
  ]
    .flatMap((pattern) => [...task.matchAll(new RegExp(pattern, "gi"))].map((match) => match[1]!))
    .find((word) => !/^(the|a|an|this|that|your|my|its|which|what)$/i.test(word));
  const file = new RegExp(
    String.raw`(?:^|[\s"'\x60(])(${pathWord}\.[A-Za-z0-9]{1,10})(?=$|[\s"'\x60),;:!?]|\.(?:\s|$))`,
  ).exec(task)?.[1];
  if (folder !== undefined) named.folder = folder.replace(/\/+$/, "") || ".";
  if (file !== undefined && !/^https?:/i.test(file)) named.file = file;
  return named;
}

function readmeIn(listing: ToolResultMessage, folder: string): string | undefined {
  if (listing.isError === true) return undefined;
  const name = entries(listing).find((entry) => /^readme(\.md|\.markdown|\.txt)?$/i.test(entry));
  return name === undefined ? undefined : folder === "." ? name : `${folder}/${name}`;
}

function entries(listing: ToolResultMessage): string[] {
  // What list answers for an empty directory: a sentence, not an entry.
  if (/^\S+ is empty$/.test(textOf(listing.output))) return [];
  return textOf(listing.output)
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith(" ") && !line.startsWith("["))
    .map((line) => line.replace(/ \(not listed\)$/, ""));
}

function summary(
  folder: string,
  listing: ToolResultMessage,
  file: string | undefined,
  read: ToolResultMessage | undefined,
): string {
  const where = folder === "." ? "The workspace" : folder;
  let text: string;
  if (listing.isError === true) text = `I could not list ${folder}: ${textOf(listing.output)}`;
  else {
    const all = entries(listing);
    const directories = all.filter((name) => name.endsWith("/"));
    const files = all.filter((name) => !name.endsWith("/"));
    const some = (names: string[]): string => names.slice(0, 6).join(", ") + (names.length > 6 ? ", …" : "");
    const parts: string[] = [];
    if (directories.length > 0)
      parts.push(
        `${directories.length} ${directories.length === 1 ? "directory" : "directories"} (${some(directories)})`,
      );
    if (files.length > 0) parts.push(`${files.length} ${files.length === 1 ? "file" : "files"} (${some(files)})`);
    text =
      all.length === 0
        ? `${where} is empty.`
        : `${where} has ${all.length} ${all.length === 1 ? "entry" : "entries"} at its top level: ${parts.join(" and ")}.`;
  }
  if (file !== undefined && read !== undefined)
    text +=
      read.isError === true
        ? ` I could not read ${file}: ${textOf(read.output)}`
        : ` ${describeFile(textOf(read.output), file)}`;
  return text + footer;
}

const footer =
  "\n\n(This answer comes from the offline demo model. All it does is list the folder your task names (else the workspace) and read the file it names (else a README there), then summarize the two; it understands nothing else of the task. For a real model, set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL.)";

// The title and first sentence of a file (a README's, a Markdown page's), from read's numbered lines.
function describeFile(numbered: string, name: string): string {
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
