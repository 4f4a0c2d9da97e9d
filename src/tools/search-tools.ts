import type { Message, ToolCallMessage } from "../session.ts";
import type { Tool, ToolDefinition } from "./tool.ts";

/** The name of the tool that loads deferred tools. */
export const searchToolsName = "search_tools";

/** At most this many tools are loaded by one search. */
export const searchToolsLimit = 5;

/** What one `search_tools` result holds: the tools it loaded, in rank order. */
export type SearchToolsOutput = { loaded: { name: string; description: string }[]; note: string };

/**
 * The `search_tools` tool over the deferred tools: it ranks them against the query by name and
 * description (BM25 over their words: no model call), and loads the best `searchToolsLimit`; a
 * tool that shares no word with the query is never loaded. Its result names them; from the next
 * model call on they are sent with the others (`loadedTools` reads them back from the session),
 * or, for those in `programOnly` (code mode's exclusive tools), declared to programs only.
 */
export function searchToolsTool(
  deferred: readonly ToolDefinition[],
  programOnly?: ReadonlySet<string>,
): Tool<{ query: string }> {
  const index = buildIndex(deferred);
  return {
    name: searchToolsName,
    description: `Load tools that are not shown yet: ${deferred.length} more are available. Describe what you need in a few words (a task, a service, an action); the best matching tools (up to ${searchToolsLimit}) can be called from your next step on.`,
    input_schema: {
      type: "object",
      properties: { query: { type: "string", description: "Words describing the tool you need." } },
      required: ["query"],
      additionalProperties: false,
    },
    handler: ({ query }: { query: string }): SearchToolsOutput => {
      const found = rank(index, query).slice(0, searchToolsLimit);
      const loaded = found.map((definition) => ({ name: definition.name, description: definition.description }));
      const note =
        loaded.length === 0
          ? "No tool matches those words; try other words (what the tool does, or the service it works with)."
          : `These tools can be called from your next step on${programOnlyNote(loaded, programOnly)}.`;
      return { loaded, note };
    },
  };
}

/**
 * The deferred tools the session's `search_tools` results loaded, in the order they were first
 * loaded. Read from the session alone, so a resumed or forked session, a replay and a durable
 * recovery all see the same set; names that are not in `deferred` are ignored.
 */
export function loadedTools(messages: readonly Message[], deferred: ReadonlySet<string>): string[] {
  const searches = new Set<string>();
  const loaded: string[] = [];
  for (const message of messages) readLoaded(message, searches, deferred, loaded);
  return loaded;
}

/**
 * One step of `loadedTools`, for a reader that goes through the session a message at a time:
 * remembers the ids of `search_tools` calls in `searches`, and adds the tools a successful result
 * of one names to `loaded`.
 */
export function readLoaded(
  message: Message,
  searches: Set<string>,
  deferred: ReadonlySet<string>,
  loaded: string[],
): void {
  if (!("type" in message)) return;
  if (message.type === "tool_call") {
    if (isSearch(message)) searches.add(message.id);
    else searches.delete(message.id);
    return;
  }
  if (message.type !== "tool_result" || message.isError === true || !searches.has(message.id)) return;
  const output = message.output;
  if (typeof output !== "object" || output === null || Array.isArray(output) || !Array.isArray(output.loaded)) return;
  for (const entry of output.loaded) {
    const name = typeof entry === "object" && entry !== null && !Array.isArray(entry) ? entry.name : undefined;
    if (typeof name === "string" && deferred.has(name) && !loaded.includes(name)) loaded.push(name);
  }
}

// Code mode's exclusive tools are loaded for programs only: the model is told where to call them.
function programOnlyNote(loaded: readonly { name: string }[], programOnly: ReadonlySet<string> | undefined): string {
  const names = programOnly === undefined ? [] : loaded.filter(({ name }) => programOnly.has(name));
  if (names.length === 0) return "";
  return ` (${names.map(({ name }) => name).join(", ")} only from a run_code program, as tools.<name>)`;
}

function isSearch(call: ToolCallMessage): boolean {
  return call.name === searchToolsName;
}

type Index = {
  documents: { definition: ToolDefinition; terms: Map<string, number>; length: number }[];
  /** In how many documents each term occurs. */
  frequency: Map<string, number>;
  averageLength: number;
};

// The name counts twice: it is the shortest and most telling description of a tool.
function buildIndex(deferred: readonly ToolDefinition[]): Index {
  const frequency = new Map<string, number>();
  const documents = deferred.map((definition) => {
    const words = [...wordsOf(definition.name), ...wordsOf(definition.name), ...wordsOf(definition.description)];
    const terms = new Map<string, number>();
    for (const word of words) terms.set(word, (terms.get(word) ?? 0) + 1);
    for (const term of terms.keys()) frequency.set(term, (frequency.get(term) ?? 0) + 1);
    return { definition, terms, length: words.length };
  });
  const total = documents.reduce((sum, document) => sum + document.length, 0);
  return { documents, frequency, averageLength: documents.length === 0 ? 0 : total / documents.length };
}

// Okapi BM25 with the usual constants; only tools with a positive score (a shared word) come back.
function rank(index: Index, query: string): ToolDefinition[] {
  const k1 = 1.2;
  const b = 0.75;
  const count = index.documents.length;
  const queryTerms = [...new Set(wordsOf(query))];
  const scored: { definition: ToolDefinition; score: number; order: number }[] = [];
  index.documents.forEach((document, order) => {
    let score = 0;
    for (const term of queryTerms) {
      const occurrences = document.terms.get(term);
      if (occurrences === undefined) continue;
      const documents = index.frequency.get(term) ?? 0;
      const idf = Math.log(1 + (count - documents + 0.5) / (documents + 0.5));
      const norm = occurrences + k1 * (1 - b + (b * document.length) / (index.averageLength || 1));
      score += (idf * occurrences * (k1 + 1)) / norm;
    }
    if (score > 0) scored.push({ definition: document.definition, score, order });
  });
  scored.sort((first, second) => second.score - first.score || first.order - second.order);
  return scored.map((entry) => entry.definition);
}

// Lower-case words of a name or a text: `github_create_issue`, `createIssue` and "create an issue"
// share `create` and `issue`. A trailing plural `s` is dropped so `issues` finds `issue`.
function wordsOf(text: string): string[] {
  const spaced = text.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
  const words: string[] = [];
  for (const word of spaced.split(/[^a-z0-9]+/)) {
    if (word.length < 2 || stopWords.has(word)) continue;
    words.push(word.length > 3 && word.endsWith("s") && !word.endsWith("ss") ? word.slice(0, -1) : word);
  }
  return words;
}

const stopWords = new Set([
  "a",
  "an",
  "the",
  "to",
  "of",
  "in",
  "on",
  "for",
  "and",
  "or",
  "is",
  "it",
  "by",
  "with",
  "from",
  "as",
  "at",
  "be",
  "this",
  "that",
]);
