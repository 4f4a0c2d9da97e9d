import { onSessionChange, type Message, type Session, type SessionChange } from "../session.ts";
import { messageCharacters } from "./content-size.ts";

/** What one compaction changed: the `compaction` event's fields. */
export type CompactionReport = {
  /** Messages replaced by shorter ones, or removed. */
  count: number;
  /** What did it: a strategy's name from its changes' `details`, `truncation` for the default. */
  strategy: string;
  /** Estimated tokens the request is shorter by (a token per 4 characters of JSON, as `estimateTokens`). */
  tokensFreed: number;
};

/**
 * Starts reading what a compaction of `session` changes (`replace` and `splice`), from the changes
 * themselves, so a strategy of the user's own is reported like the library's. `finish` stops and
 * gives the report: `undefined` when nothing changed; `fallbackName` names a strategy whose
 * changes name none.
 */
export function watchCompaction(session: Session): { finish: (fallbackName: string) => CompactionReport | undefined } {
  const tally: Tally = { count: 0, characters: 0, strategy: undefined };
  const stop = onSessionChange(session, (change) => countChange(tally, change));
  return {
    finish: (fallbackName) => {
      stop();
      return reportOf(tally, fallbackName);
    },
  };
}

type Tally = { count: number; characters: number; strategy: string | undefined };

function countChange(tally: Tally, change: SessionChange): void {
  if (change.type === "replace") {
    tally.count++;
    tally.characters += characters([change.previous]) - characters([change.message]);
  } else if (change.type === "splice") {
    tally.count += change.removed.length;
    tally.characters += characters(change.removed) - characters(change.inserted);
  } else return;
  const named = change.details?.strategy;
  if (tally.strategy === undefined && typeof named === "string") tally.strategy = named;
}

function reportOf(tally: Tally, fallbackName: string): CompactionReport | undefined {
  if (tally.count === 0) return undefined;
  return {
    count: tally.count,
    strategy: tally.strategy ?? fallbackName,
    tokensFreed: Math.max(0, Math.round(tally.characters / 4)),
  };
}

function characters(messages: readonly Message[]): number {
  let total = 0;
  for (const message of messages) total += messageCharacters(message);
  return total;
}
