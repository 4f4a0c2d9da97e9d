import { contentText } from "../content-parts.ts";
import { isToolCall, isToolResult, type AssistantMessage, type Message } from "../session.ts";
import { turnBefore } from "../session-turns.ts";
import type { ToolDefinition } from "../tools/tool.ts";

/**
 * The run's answer when the session's last model turn called a tool with `answer: "verbatim"`
 * and every call of that turn is answered: an assistant message holding the first such call's
 * result text (call order), or `undefined` (none, an error result, or the answer is already in).
 * Read from the session alone, so a run resumed after its tool results were stored gives it too.
 */
export function verbatimAnswer(
  messages: readonly Message[],
  definitions: readonly ToolDefinition[],
): AssistantMessage | undefined {
  const verbatim = verbatimNames(definitions);
  if (verbatim.size === 0) return undefined;
  const turn = turnBefore(messages, messages.length);
  if (turn?.type !== "model" || turn.end === turn.results) return undefined;
  const calls = messages.slice(turn.start, turn.results).filter(isToolCall);
  const results = new Map(
    messages
      .slice(turn.results, turn.end)
      .filter(isToolResult)
      .map((result) => [result.id, result]),
  );
  if (calls.some((call) => !results.has(call.id))) return undefined;
  const first = calls.find((call) => verbatim.has(call.name));
  const result = first === undefined ? undefined : results.get(first.id);
  if (result === undefined || result.isError === true) return undefined;
  const content =
    result.content !== undefined
      ? contentText(result.content)
      : typeof result.output === "string"
        ? result.output
        : JSON.stringify(result.output);
  return { role: "assistant", content, stopReason: "end_turn", answerFrom: result.id };
}

// The tools that answer verbatim, found once per list of definitions (a run's is the same every turn).
const verbatimByDefinitions = new WeakMap<readonly ToolDefinition[], ReadonlySet<string>>();

function verbatimNames(definitions: readonly ToolDefinition[]): ReadonlySet<string> {
  let names = verbatimByDefinitions.get(definitions);
  if (names === undefined) {
    names = new Set(
      definitions
        .filter((definition) => "answer" in definition && definition.answer === "verbatim")
        .map(({ name }) => name),
    );
    verbatimByDefinitions.set(definitions, names);
  }
  return names;
}
