import { contentText } from "../content-parts.ts";
import { isToolCall, isToolResult, type AssistantMessage, type Message } from "../session.ts";
import { turnBefore } from "../session-turns.ts";
import type { ToolDefinition } from "../tools/tool.ts";

/**
 * The run's answer when the session's last model turn called a tool with `answer: "verbatim"`
 * (one of `verbatim`) and every call of that turn is answered: an assistant message holding the first such call's
 * result text (call order), or `undefined` (none, an error result, or the answer is already in).
 * Read from the session alone, so a run resumed after its tool results were stored gives it too.
 */
export function verbatimAnswer(
  messages: readonly Message[],
  verbatim: ReadonlySet<string>,
): AssistantMessage | undefined {
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

/** The names of the tools that answer verbatim (`answer: "verbatim"`); read once per run, with its offer. */
export function verbatimNames(definitions: readonly ToolDefinition[]): ReadonlySet<string> {
  let names: Set<string> | undefined;
  for (const definition of definitions)
    if ("answer" in definition && definition.answer === "verbatim") (names ??= new Set()).add(definition.name);
  return names ?? noVerbatim;
}

const noVerbatim: ReadonlySet<string> = new Set();
