import { AgentError } from "../errors.ts";
import type { Message, Session } from "../session.ts";
import { turnBefore, unansweredCalls } from "../session-turns.ts";
import { toolNameProblem, toolSchemaProblem } from "../tools/tool.ts";
import type { AgentDefinition, Handoff } from "./agent-types.ts";
import { handoff } from "./handoff.ts";

/** One agent of a run and the handoffs it may take, by tool name (`returnTo` ones included). */
export type AgentNode = {
  agent: AgentDefinition;
  handoffs: Map<string, Handoff>;
};

/**
 * Every agent reachable from `root` by handoffs, by name. Two different agents with one name are
 * an error, and so is a tool of any of them that no provider could take (its name, its `input_schema`).
 */
export function agentGraph(root: AgentDefinition): Map<string, AgentNode> {
  const nodes = new Map<string, AgentNode>();
  const visit = (agent: AgentDefinition): AgentNode => {
    const known = nodes.get(agent.name);
    if (known !== undefined) {
      if (known.agent !== agent) throw new AgentError(`two different agents are named ${agent.name}`);
      return known;
    }
    // A handoff's target runs later in the call: its tools are checked now, with the first agent's.
    for (const definition of agent.tools) {
      const problem = toolNameProblem(definition.name, definition.description) ?? toolSchemaProblem(definition);
      if (problem !== undefined) throw new AgentError(`agent "${agent.name}": ${problem}`);
    }
    const node: AgentNode = { agent, handoffs: new Map() };
    nodes.set(agent.name, node);
    for (const entry of agent.handoffs) {
      node.handoffs.set(entry.toolName, entry);
      const target = visit(entry.agent);
      if (entry.returnTo) {
        const back = handoff(agent, { toolName: `transfer_back_to_${agent.name}` });
        target.handoffs.set(back.toolName, back);
      }
    }
    return node;
  };
  visit(root);
  return nodes;
}

/** The active agent of a session and the handoff that made it active (absent for the root). */
export type ActiveAgent = { node: AgentNode; since?: { resultId: string; handoff: Handoff } };

/**
 * Reads the active agent from the session itself: the root, then each answered (non-error) handoff
 * call in order, once every call of its response is answered. The caller keeps nothing; a session loaded from a store resumes where it was.
 */
export function activeAgent(graph: Map<string, AgentNode>, root: AgentDefinition, session: Session): ActiveAgent {
  let active: ActiveAgent = { node: graph.get(root.name)! };
  const calls = new Map<string, string>();
  // A handoff is taken once its response is answered whole: beside a call waiting for a decision
  // (or not yet run) it is not, and the agent that made it answers that call on resume.
  const last = turnBefore(session.messages, session.messages.length);
  const pending = last === undefined || unansweredCalls(session.messages, last).length === 0 ? undefined : last.start;
  for (const [index, message] of session.messages.entries()) {
    if (!("type" in message)) continue;
    if (pending !== undefined && index >= pending) break;
    if (message.type === "tool_call") calls.set(message.id, message.name);
    else if (message.type === "tool_result" && message.isError !== true) {
      const taken = active.node.handoffs.get(calls.get(message.id) ?? "");
      if (taken !== undefined)
        active = { node: graph.get(taken.agent.name)!, since: { resultId: message.id, handoff: taken } };
    }
  }
  return active;
}

/** An earlier handoff call of the same response as call `id`, if any (only the first handoff of a response is taken). */
export function earlierHandoff(messages: readonly Message[], id: string, node: AgentNode): string | undefined {
  const index = messages.findIndex((message) => "type" in message && message.type === "tool_call" && message.id === id);
  let earlier: string | undefined;
  // A response's messages are contiguous model messages; a user message or a result ends the look back.
  for (let before = index - 1; before >= 0; before--) {
    const message = messages[before]!;
    if (!("type" in message) ? message.role !== "assistant" : message.type === "tool_result") break;
    if ("type" in message && message.type === "tool_call" && node.handoffs.has(message.name)) earlier = message.name;
  }
  return earlier;
}
