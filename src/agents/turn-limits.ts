import { MaxIterationsError } from "../errors.ts";
import { defaultMaxIterations } from "../loop/loop-options.ts";
import type { AgentDefinition } from "./agent-types.ts";

/**
 * The turn limits of one `runAgent` call: the call's `maxIterations` bounds the model calls of
 * every agent together, and an agent's own `options.maxIterations` bounds that agent's calls
 * within the call (all of them, when the conversation comes back to it). Each agent's run gets
 * the stricter of what is left of both.
 */
export type TurnLimits = {
  /** The `maxIterations` of `agent`'s next run. */
  next: (agent: AgentDefinition) => number;
  /** A model call of `agent` started (its run's `turn-start`). */
  counted: (agent: string) => void;
  /** The error for the call, from the `MaxIterationsError` `agent`'s run threw: it names the limit that was reached. */
  reached: (error: MaxIterationsError, agent: AgentDefinition) => MaxIterationsError;
};

export function createTurnLimits(runLimit: number | undefined): TurnLimits {
  const limit = runLimit ?? defaultMaxIterations;
  const byAgent = new Map<string, number>();
  let turns = 0;
  // Which limit the current run was given: the call's, or its agent's own.
  let ownLimit = false;
  return {
    next: (agent) => {
      const own = agent.options.maxIterations;
      const callLeft = Math.max(0, limit - turns);
      const agentLeft = own === undefined ? Infinity : Math.max(0, own - (byAgent.get(agent.name) ?? 0));
      ownLimit = agentLeft < callLeft;
      return Math.min(callLeft, agentLeft);
    },
    counted: (agent) => {
      turns++;
      byAgent.set(agent, (byAgent.get(agent) ?? 0) + 1);
    },
    reached: (error, agent) => {
      const at = error.message.indexOf("Last action:");
      const lastAction = at === -1 ? "" : ` ${error.message.slice(at)}`;
      const maxIterations = ownLimit ? agent.options.maxIterations! : limit;
      const what = ownLimit
        ? `Agent "${agent.name}" reached its maxIterations (${maxIterations}) in this run`
        : `The run reached maxIterations (${maxIterations}${runLimit === undefined ? ", the default" : ""}) over all its agents, in agent "${agent.name}",`;
      return new MaxIterationsError(`${what} while the model still wanted to continue.${lastAction}`, {
        maxIterations,
        session: error.session,
      });
    },
  };
}
