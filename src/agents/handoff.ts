import type { InvokeModel } from "../model/invoke-model.ts";
import { toolNameProblem } from "../tools/tool.ts";
import type { Message, Session } from "../session.ts";
import type { AgentDefinition, Handoff, HandoffHistory } from "./agent-types.ts";

export type { Handoff, HandoffHistory } from "./agent-types.ts";

/** How `handoff` is told to hand off. */
export type HandoffOptions = {
  /** The tool the model calls to hand off (default `transfer_to_<name>`). */
  toolName?: string;
  /** The tool's description (default: the agent's description). */
  description?: string;
  history?: HandoffHistory;
  /** Runs before the target's first model call (load data, log). A throw ends the run with that error. */
  onHandoff?: (input: { session: Session; from: string; to: string }) => void | Promise<void>;
  /** The target also gets `transfer_back_to_<caller>`, to give the conversation back. */
  returnTo?: boolean;
  /** The model that writes a `summary` history (one call, no tools; default: the calling agent's model). */
  summarizer?: InvokeModel;
};

/** A handoff to `agent`: the model sees a tool `transfer_to_<name>` that hands it the conversation. */
export function handoff(agent: AgentDefinition, options: HandoffOptions = {}): Handoff {
  if ((agent as { kind?: unknown } | null)?.kind !== "agent")
    throw new TypeError("handoff: its first argument must be an agent made by defineAgent");
  const history = options.history ?? "full";
  checkHistory(history);
  checkHandoffOptions(options, agent.name);
  return {
    kind: "handoff",
    agent,
    toolName: options.toolName ?? `transfer_to_${agent.name}`,
    description:
      options.description ??
      `Hand the conversation to the ${agent.name} agent${agent.description === undefined ? "" : `: ${agent.description}`}.`,
    history,
    onHandoff: options.onHandoff,
    returnTo: options.returnTo ?? false,
    summarizer: options.summarizer,
  };
}

function checkHistory(history: unknown): void {
  if (typeof history === "function") return;
  if (typeof history === "object" && history !== null) {
    const { lastTurns } = history as { lastTurns?: unknown };
    if (!(typeof lastTurns === "number" && Number.isInteger(lastTurns) && lastTurns >= 1))
      throw new TypeError(`handoff history lastTurns: expected an integer >= 1, got ${String(lastTurns)}`);
    return;
  }
  if (history !== "full" && history !== "no-tools" && history !== "summary")
    throw new TypeError(
      `handoff history: expected "full", "no-tools", "summary", { lastTurns: n } or a function, got ${JSON.stringify(history) ?? String(history)}`,
    );
}

function checkHandoffOptions(options: HandoffOptions, name: string): void {
  const given = options as Partial<Record<keyof HandoffOptions, unknown>>;
  const where = `handoff to "${name}"`;
  // The model calls it by this name: held to what every tool name is (providers' characters).
  if (given.toolName !== undefined && toolNameProblem(given.toolName, undefined) !== undefined)
    throw new TypeError(
      `${where}: toolName must be 1-64 letters, digits, _ or -, got ${JSON.stringify(given.toolName)}`,
    );
  if (given.description !== undefined && typeof given.description !== "string")
    throw new TypeError(`${where}: description must be a string`);
  if (given.returnTo !== undefined && typeof given.returnTo !== "boolean")
    throw new TypeError(`${where}: returnTo must be true or false`);
  for (const field of ["onHandoff", "summarizer"] as const)
    if (given[field] !== undefined && typeof given[field] !== "function")
      throw new TypeError(`${where}: ${field} must be a function`);
}

/**
 * The messages the target of a handoff is shown of what came before it; `messages` end with the
 * handoff's result (which holds the summary of a `summary` handoff).
 */
export function historyView(messages: Message[], history: HandoffHistory): Message[] {
  if (history === "full") return messages;
  if (history === "no-tools") return textOnly(messages);
  if (history === "summary") {
    const summary = handoffSummary(messages[messages.length - 1]);
    // No summary could be written: the text of the conversation, which any provider reads.
    return summary === undefined
      ? textOnly(messages)
      : [{ role: "user", content: `Summary of the conversation before this handoff:\n${summary}` }];
  }
  if (typeof history === "function") return history(messages);
  let seen = 0;
  for (let index = messages.length - 1; index >= 0; index--) {
    if ("role" in messages[index]! && (messages[index] as { role: string }).role === "user") seen++;
    if (seen === history.lastTurns) return messages.slice(index);
  }
  return messages;
}

/** How a handoff's history is named in its event: a function is `custom`. */
export function historyName(
  history: HandoffHistory,
): "full" | "no-tools" | "summary" | "custom" | { lastTurns: number } {
  return typeof history === "function" ? "custom" : history;
}

/** The result of a `summary` handoff: where the summary is kept, so it is written once and a resumed session has it. */
export type SummaryHandoffOutput = { message: string; summary?: string; problem?: string };

function handoffSummary(result: Message | undefined): string | undefined {
  if (result === undefined || !("type" in result) || result.type !== "tool_result") return undefined;
  const { output } = result;
  if (typeof output !== "object" || output === null || Array.isArray(output)) return undefined;
  return typeof output.summary === "string" ? output.summary : undefined;
}

function textOnly(messages: Message[]): Message[] {
  return messages.filter((message) => !("type" in message));
}
