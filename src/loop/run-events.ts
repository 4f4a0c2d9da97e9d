import type { AgentEvent } from "./events.ts";
import { createMetricsCollector } from "./metrics.ts";
import type { Message, ModelMessage } from "../session.ts";
import type { ModelPrice } from "../model/cost.ts";

/**
 * The loop's side of a run's events. Every event counts in the run's metrics; it reaches the
 * run's listener or iterating consumer only while one is there. The events of every turn have
 * their own calls, which update the metrics directly and build the event object only when someone
 * listens: a run nobody listens to pays for its metrics, not for events.
 */
export type RunEvents = {
  /** Any event. `run-end` is passed on always, with the run's `metrics` set. */
  emit: (event: AgentEvent) => void;
  /** Whether anyone hears events now: build an event object only when true. */
  listening: () => boolean;
  /** `turn-start`. */
  turnStart: (iteration: number) => void;
  /** `message`: `message` (the stored copy) entered the session; the event carries a copy of it as it is now. */
  message: (message: Message) => void;
  /** `turn-end`, with the stop reason and usage of the turn's last message. */
  turnEnd: (iteration: number, last: ModelMessage | undefined) => void;
};

/**
 * `report` hands an event to the listeners; `listening` says whether there are any (see
 * `runStream`); `prices` (the run's) price the metrics' turns and models.
 */
export function createRunEvents(
  report: (event: AgentEvent) => void,
  listening: () => boolean,
  prices?: Readonly<Record<string, ModelPrice>>,
): RunEvents {
  const metrics = createMetricsCollector(undefined, prices === undefined ? {} : { prices });
  return {
    emit(event) {
      if (event.type === "run-end") {
        const summed = metrics.finish();
        if (event.costUsd !== undefined) summed.costUsd = event.costUsd;
        if (event.budgetExceeded !== undefined) summed.budgetExceeded = event.budgetExceeded;
        return report({ ...event, metrics: summed });
      }
      metrics.observe(event);
      if (listening()) report(event);
    },
    listening,
    turnStart(iteration) {
      metrics.turnStart();
      if (listening()) report({ type: "turn-start", iteration });
    },
    message(message) {
      metrics.message(message);
      // A copy: the loop records things on the session's own message later (a waiting call's
      // approval, a result held for a later call); an event keeps what entered, as a store's log does.
      if (listening()) report({ type: "message", message: { ...message } });
    },
    turnEnd(iteration, last) {
      metrics.turnEnd(iteration, last?.usage);
      if (listening()) report(turnEndEvent(iteration, last));
    },
  };
}

/**
 * The events of a run nobody can ever hear (`agentLoop` without `onEvent`: no listener, and no
 * stream to iterate): nothing is built or summed up, not even the metrics `run-end` would carry.
 */
export const unheardRunEvents: RunEvents = {
  emit: ignore,
  listening: () => false,
  turnStart: ignore,
  message: ignore,
  turnEnd: ignore,
};

function ignore(): void {}

function turnEndEvent(iteration: number, last: ModelMessage | undefined): AgentEvent {
  const event: AgentEvent = { type: "turn-end", iteration };
  if (last?.stopReason !== undefined) event.stopReason = last.stopReason;
  if (last?.usage !== undefined) event.usage = last.usage;
  return event;
}
