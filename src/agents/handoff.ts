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
};

/** A handoff to `agent`: the model sees a tool `transfer_to_<name>` that hands it the conversation. */
export function handoff(agent: AgentDefinition, options: HandoffOptions = {}): Handoff {
  const history = options.history ?? "full";
  if (typeof history === "object" && !(Number.isInteger(history.lastTurns) && history.lastTurns >= 1))
    throw new TypeError(`handoff history lastTurns: expected an integer >= 1, got ${String(history.lastTurns)}`);
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
  };
}

/** The messages the target of a handoff is shown of what came before it. */
export function historyView(messages: Message[], history: HandoffHistory): Message[] {
  if (history === "full") return messages;
  if (history === "no-tools") return messages.filter((message) => !("type" in message));
  if (typeof history === "function") return history(messages);
  let seen = 0;
  for (let index = messages.length - 1; index >= 0; index--) {
    if ("role" in messages[index]! && (messages[index] as { role: string }).role === "user") seen++;
    if (seen === history.lastTurns) return messages.slice(index);
  }
  return messages;
}

/** How a handoff's history is named in its event: a function is `custom`. */
export function historyName(history: HandoffHistory): "full" | "no-tools" | "custom" | { lastTurns: number } {
  return typeof history === "function" ? "custom" : history;
}
