import { AgentError, describeValue } from "../errors.ts";
import type { ElicitationAnswer, ElicitationRequest, ToolElicit } from "../tools/elicitation.ts";
import type { AgentEvent } from "./events.ts";

/**
 * The questions a run's tools put to its user, waiting for `answerElicitation`. Nothing is
 * allocated until a tool asks.
 */
export type Elicitations = {
  /** Set by the run once someone can hear its events; without it, every question is cancelled. */
  emit: ((event: AgentEvent) => void) | undefined;
  ask: ToolElicit;
  /** Answers the question `id`; `false` when none with that id waits (answered, cancelled, unknown). */
  answer: (id: string, answer: ElicitationAnswer) => boolean;
};

export function runElicitations(): Elicitations {
  let waiting: Map<string, (answer: ElicitationAnswer) => void> | undefined;
  let asked = 0;
  const elicitations: Elicitations = {
    emit: undefined,
    ask: (toolCallId, server, request, signal) => {
      const { emit } = elicitations;
      if (emit === undefined || signal.aborted) return Promise.resolve(cancel);
      const id = `elicitation-${++asked}`;
      waiting ??= new Map();
      const pending = waiting;
      return new Promise<ElicitationAnswer>((resolve) => {
        const settle = (answer: ElicitationAnswer): void => {
          signal.removeEventListener("abort", onAbort);
          pending.delete(id);
          resolve(answer);
        };
        const onAbort = (): void => settle(cancel);
        signal.addEventListener("abort", onAbort, { once: true });
        pending.set(id, settle);
        emit(elicitationEvent(id, server, toolCallId, request));
      });
    },
    answer: (id, answer) => {
      checkAnswer(answer);
      const settle = waiting?.get(id);
      if (settle === undefined) return false;
      settle(answer);
      return true;
    },
  };
  return elicitations;
}

const cancel: ElicitationAnswer = { action: "cancel" };

function elicitationEvent(id: string, server: string, toolCallId: string, request: ElicitationRequest): AgentEvent {
  return { type: "elicitation-request", id, server, toolCallId, request };
}

// Checked where it enters, as any option: a typo must not read as a silent cancel.
function checkAnswer(answer: unknown): void {
  const { action, content } = (typeof answer === "object" && answer !== null ? answer : {}) as {
    action?: unknown;
    content?: unknown;
  };
  if (action !== "accept" && action !== "decline" && action !== "cancel")
    throw new AgentError(
      `answerElicitation: answer must be { action: "accept", content? }, { action: "decline" } or { action: "cancel" }; got ${describeValue(answer)}`,
    );
  if (content !== undefined && (typeof content !== "object" || content === null || Array.isArray(content)))
    throw new AgentError(`answerElicitation: content must be an object; got ${describeValue(content)}`);
}
