import type { GuardrailDecision } from "./ask-guardrails.ts";

/** An event of the model's stream as the loop passes it on (text deltas among them). */
type StreamedEvent = { type: string; delta?: string };

/**
 * Holds back a streamed answer until output guardrails pass it. `"answer"`: every event of the
 * model's stream is held until `release` (the turn had tool calls, or its answer passed) or
 * `discard` (it was blocked, redacted or sent back). `"sentence"`: other events pass at once; text
 * is shown a sentence at a time, each once `check` passed the answer up to its end; a block stops
 * the showing and calls `tripped` (which aborts the model call).
 */
export type HoldBack<E extends StreamedEvent> = {
  /** Takes an event of the model's stream in place of the run's `emit`. */
  readonly emit: (event: E) => void;
  /** Shows everything held, in order. */
  readonly release: () => void;
  /** Drops everything held: none of it was shown. */
  readonly discard: () => void;
  /** Waits for the sentence check in flight; the decision that blocked a sentence, if one did. */
  readonly settled: () => Promise<GuardrailDecision | undefined>;
};

export function createHoldBack<E extends StreamedEvent>(
  mode: "answer" | "sentence",
  emit: (event: E) => void,
  textDelta: (delta: string) => E,
  sentence: { check: (text: string) => Promise<GuardrailDecision>; tripped: (decision: GuardrailDecision) => void },
): HoldBack<E> {
  return mode === "answer" ? holdAnswer(emit) : holdSentences(emit, textDelta, sentence);
}

function holdAnswer<E extends StreamedEvent>(emit: (event: E) => void): HoldBack<E> {
  let held: E[] = [];
  return {
    emit: (event) => {
      // A retry voids what its failed attempt streamed: nothing of it was shown.
      if (event.type === "retry") held = [];
      if (event.type === "retry" || event.type === "fallback") emit(event);
      else held.push(event);
    },
    release: () => {
      for (const event of held.splice(0)) emit(event);
    },
    discard: () => {
      held = [];
    },
    settled: () => Promise.resolve(undefined),
  };
}

function holdSentences<E extends StreamedEvent>(
  emit: (event: E) => void,
  textDelta: (delta: string) => E,
  sentence: { check: (text: string) => Promise<GuardrailDecision>; tripped: (decision: GuardrailDecision) => void },
): HoldBack<E> {
  let shown = "";
  let pending = "";
  // The sentence check in flight, if any; once one did not pass, no more text is shown.
  let checking: Promise<void> | undefined;
  let stopped = false;
  let blocked: GuardrailDecision | undefined;
  const next = (): void => {
    if (checking !== undefined || stopped) return;
    const end = sentenceEnd(pending);
    if (end === 0) return;
    const candidate = pending.slice(0, end);
    checking = sentence.check(shown + candidate).then(
      (decision) => {
        checking = undefined;
        if (decision.action === "allow" && decision.redacted === undefined) {
          shown += candidate;
          pending = pending.slice(candidate.length);
          emit(textDelta(candidate));
          next();
          return;
        }
        // A redaction or a retry is decided on the whole answer: hold the rest until then.
        stopped = true;
        if (decision.action === "block") {
          blocked = decision;
          sentence.tripped(decision);
        }
      },
      () => {
        // The run was aborted: nothing more is shown.
        checking = undefined;
        stopped = true;
      },
    );
  };
  return {
    emit: (event) => {
      if (event.type === "retry") {
        pending = "";
        emit(event);
      } else if (event.type === "text-delta") {
        pending += event.delta ?? "";
        next();
      } else emit(event);
    },
    release: () => {
      stopped = true;
      if (pending !== "") emit(textDelta(pending));
      pending = "";
    },
    discard: () => {
      stopped = true;
      pending = "";
    },
    settled: async () => {
      while (checking !== undefined) await checking;
      return blocked;
    },
  };
}

// Where the last complete sentence of `text` ends (after its punctuation and the space that
// follows it, or a line break), or 0 when no sentence is complete yet.
function sentenceEnd(text: string): number {
  let end = 0;
  for (const match of text.matchAll(/[.!?…]+["')\]]*\s+|\n+/g)) end = match.index + match[0].length;
  return end;
}
