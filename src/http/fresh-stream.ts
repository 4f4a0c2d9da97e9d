import { AgentError } from "../errors.ts";
import { consumerMissesEvents } from "../loop/event-iterator.ts";

/**
 * Throws unless whoever iterates `stream` from now on hears every event from its first
 * (`run-start`): a run that began while nobody iterated it (its `result` read, then something
 * awaited before the stream was handed over) has sent its first events to nobody, and a stream
 * someone else iterates gives each event to one consumer only.
 */
export function checkFreshStream(stream: object, where: string): void {
  if (consumerMissesEvents(stream))
    throw new AgentError(
      `${where}: the run already began (its result was awaited, or the stream is iterated elsewhere), so its first events are gone; hand the stream over right after agentStream(...), in the same synchronous step`,
    );
}
