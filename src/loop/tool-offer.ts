import { hasKeptOutputs, keptOutputCount, type Message, type Session } from "../session.ts";
import { recallOutputName, recallOutputTool } from "../tools/recall-output.ts";
import { readLoaded, searchToolsName, searchToolsTool } from "../tools/search-tools.ts";
import { toolSchemas, type ToolDefinition, type ToolSchema } from "../tools/tool.ts";
import { markOwnTool } from "../tools/approval-setup.ts";
import { verbatimNames } from "./verbatim-answer.ts";

/**
 * Which tools a run shows the model, call by call, and which it runs. Both are read from the
 * session alone, so a resumed or forked session, a replay and a durable recovery agree.
 */
export type ToolOffer = {
  /** Every tool the run can execute: its own, `run_code` with code mode, `search_tools` while any is deferred, and `recall_output`. */
  readonly definitions: readonly ToolDefinition[];
  /**
   * The tools for the next model call: the run's own that are not deferred, then `run_code` with
   * code mode (declaring the tools a program can call now), then `search_tools` (while any is
   * deferred), then the deferred tools the session loaded in the order they were loaded, then
   * `recall_output` once an output of the session was cleared or offloaded; never a tool only
   * programs may call. The same array as last time when nothing changed.
   */
  readonly offered: (session: Session) => ToolSchema[];
  /**
   * Whether the model may call tool `name` in the call `id`: every tool but a deferred one that no
   * `search_tools` result before that call loaded.
   */
  readonly callable: (session: Session, name: string, id: string) => boolean;
  /**
   * The deferred tools loaded before the call `id` entered the session (all the session's when it
   * is not there), in load order: what a code call's program may reach.
   */
  readonly loadedBefore: (session: Session, id: string) => readonly string[];
  /** The names of `offered(session)`. */
  readonly names: (session: Session) => readonly string[];
  /** The tools among `definitions` that answer verbatim (`answer: "verbatim"`). */
  readonly verbatim: ReadonlySet<string>;
};

/**
 * What code mode changes in an offer: `run_code` after the run's own tools, described anew when
 * the session loads a deferred tool a program may call, and the tools only programs may call
 * (`exclusive`), never shown themselves (a deferred one is still loaded by `search_tools`).
 */
export type CodeModeOffer = {
  readonly tool: ToolDefinition;
  /** `run_code`'s description with these deferred tools loaded; absent: it never changes. */
  readonly describe: ((loaded: readonly string[]) => string) | undefined;
  readonly programOnly: ReadonlySet<string> | undefined;
};

/** Reads a run's tools into its offer; `maxChars` caps what `recall_output` answers. */
export function createToolOffer(
  tools: readonly ToolDefinition[],
  maxChars: number,
  codeMode?: CodeModeOffer,
): ToolOffer {
  const deferred = tools.filter((definition) => definition.deferred === true);
  const deferredNames = deferred.length === 0 ? noneDeferred : new Set(deferred.map((definition) => definition.name));
  const programOnly = codeMode?.programOnly;
  const shownDirectly = (definition: ToolDefinition): boolean => programOnly?.has(definition.name) !== true;
  // A tool of the user's own with one of these names wins: theirs is the one the model knows.
  // The loop's own tools: outside an approval policy unless a rule names them.
  const search =
    deferred.length > 0 && !named(tools, searchToolsName)
      ? markOwnTool(searchToolsTool(deferred, programOnly))
      : undefined;
  const recall = named(tools, recallOutputName) ? undefined : recallFor(maxChars);
  const own = codeMode === undefined ? tools : [...tools, codeMode.tool];
  const definitions = [...own];
  if (search !== undefined) definitions.push(search);
  if (recall !== undefined) definitions.push(recall.definition);
  const base = toolSchemas(own.filter((definition) => definition.deferred !== true && shownDirectly(definition)));
  // Where `run_code` is in `base`, for a description that follows the loaded tools.
  const codeAt = codeMode?.describe === undefined ? -1 : base.length - 1;
  if (search !== undefined) base.push(...toolSchemas([search]));
  const schemaOf =
    deferred.length === 0
      ? noSchemas
      : new Map(toolSchemas(deferred.filter(shownDirectly)).map((schema) => [schema.name, schema]));
  const recallSchema = recall === undefined ? undefined : recall.schema;
  const reader = deferred.length === 0 ? undefined : createLoadedReader(deferredNames);
  let last: { session: Session; loaded: number; recall: boolean; kept: number; tools: ToolSchema[] } | undefined;
  const offered = (session: Session): ToolSchema[] => {
    const loaded = reader === undefined ? noneLoaded : reader.read(session.messages);
    const same = last?.session === session ? last : undefined;
    const kept = keptOutputCount();
    // Kept outputs only ever grow: `recall_output` once shown stays, and until then the session's
    // are looked up only after an output was kept somewhere.
    const withRecall =
      recallSchema !== undefined &&
      (same !== undefined && (same.recall || same.kept === kept) ? same.recall : hasKeptOutputs(session));
    // Loaded tools only ever grow (or start over after a compaction removed a search): their count says it.
    if (
      same !== undefined &&
      same.loaded === loaded.length &&
      same.recall === withRecall &&
      reader?.restarted !== true
    ) {
      same.kept = kept;
      return same.tools;
    }
    const shown = [...base];
    for (const name of loaded) {
      const schema = schemaOf.get(name);
      if (schema !== undefined) shown.push(schema);
    }
    if (codeAt >= 0 && loaded.length > 0)
      shown[codeAt] = { ...base[codeAt]!, description: codeMode!.describe!(loaded) };
    if (withRecall) shown.push(recallSchema);
    last = { session, loaded: loaded.length, recall: withRecall, kept, tools: shown };
    return shown;
  };
  // A program's calls all ask about its code call: what was read for it holds while that call is
  // where it was (nothing before a call changes while it runs).
  let lastRead: { messages: readonly Message[]; id: string; at: number; loaded: readonly string[] } | undefined;
  const loadedBefore = (session: Session, id: string): readonly string[] => {
    if (deferredNames.size === 0) return noneLoaded;
    const { messages } = session;
    if (lastRead?.messages === messages && lastRead.id === id && isCallAt(messages, lastRead.at, id))
      return lastRead.loaded;
    let end = messages.length;
    while (end > 0 && !isCall(messages[end - 1]!, id)) end--;
    const before = end === 0 ? messages : messages.slice(0, end - 1);
    const loaded: string[] = [];
    const searches = new Set<string>();
    for (const message of before) readLoaded(message, searches, deferredNames, loaded);
    if (end > 0) lastRead = { messages, id, at: end - 1, loaded };
    return loaded;
  };
  return {
    definitions,
    offered,
    names: (session) => offered(session).map((schema) => schema.name),
    callable: (session, name, id) => !deferredNames.has(name) || loadedBefore(session, id).includes(name),
    loadedBefore,
    verbatim: verbatimNames(definitions),
  };
}

// `recall_output` is the same for every run with the same `maxChars`: made once (nothing of a run is in it).
const recallTools = new Map<number, { definition: ToolDefinition; schema: ToolSchema }>();

function recallFor(maxChars: number): { definition: ToolDefinition; schema: ToolSchema } {
  let recall = recallTools.get(maxChars);
  if (recall === undefined) {
    const definition = markOwnTool(recallOutputTool(maxChars)) as ToolDefinition;
    recall = { definition, schema: toolSchemas([definition])[0]! };
    // A process uses one or two sizes; one that picks a new size per run keeps only a few.
    if (recallTools.size >= 8) recallTools.clear();
    recallTools.set(maxChars, recall);
  }
  return recall;
}

const noneLoaded: readonly string[] = [];
// Most runs defer no tool: they share these empty lookups rather than build their own.
const noneDeferred: ReadonlySet<string> = new Set();
const noSchemas: ReadonlyMap<string, ToolSchema> = new Map();

function named(tools: readonly ToolDefinition[], name: string): boolean {
  return tools.some((definition) => definition.name === name);
}

function isCallAt(messages: readonly Message[], at: number, id: string): boolean {
  const message = messages[at];
  return message !== undefined && isCall(message, id);
}

function isCall(message: Message, id: string): boolean {
  return "type" in message && message.type === "tool_call" && message.id === id;
}

// Reads the loaded tools a message at a time, remembering how far it read: each model call reads
// only what entered since. It starts over when the messages it read are no longer there as they
// were (a compaction removed or replaced some).
function createLoadedReader(deferred: ReadonlySet<string>): {
  read: (messages: readonly Message[]) => readonly string[];
  restarted: boolean;
} {
  let searches = new Set<string>();
  let loaded: string[] = [];
  let read = 0;
  let lastRead: Message | undefined;
  const reader = {
    restarted: false,
    read: (messages: readonly Message[]): readonly string[] => {
      reader.restarted = read > messages.length || (read > 0 && messages[read - 1] !== lastRead);
      if (reader.restarted) {
        searches = new Set();
        loaded = [];
        read = 0;
      }
      for (; read < messages.length; read++) readLoaded(messages[read]!, searches, deferred, loaded);
      lastRead = messages[read - 1];
      return loaded;
    },
  };
  return reader;
}
