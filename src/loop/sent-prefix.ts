import { onSessionChange, type Message, type Session, type SessionChange } from "../session.ts";

/** What may change messages a model was already sent (the `cache` event's `changedBy`). */
export type PrefixCause = "compaction" | "steering" | "approval" | "hook" | "guardrail";

/** Where a request stopped beginning with the one before it, and what the loop knows changed it. */
export type PrefixChange = { changedAt: number; changedBy: PrefixCause | "unknown" };

/**
 * Compares a request about to be sent with the last one sent for the same session, and says where
 * it first differs (`undefined`: it begins with all of the previous one, so a provider's prompt
 * cache can hold). The last request is kept beside the session, not in one run: the next run on
 * the same session (after a pause for approval, a follow-up task) is compared with it too. What
 * changed it is read from the session's changes since (compaction's replacements and splices,
 * approval updates in place, which only a notification shows) and from what the loop reports
 * (`noteSessionChange`: steering); `viaHook` says the request (or the previous one) is a
 * `beforeModelCall` hook's view; `fallback` names a change the loop saw but the session did not
 * report (a `compaction` event of a strategy that edits without recording).
 */
export function requestPrefixChange(
  session: Session,
  messages: readonly Message[],
  options: { viaHook: boolean; fallback: PrefixCause | undefined },
): PrefixChange | undefined {
  const tracker = trackerOf(session);
  const previous = tracker.sent;
  const previousViaHook = tracker.viaHook;
  const touched = tracker.touched;
  // A copy of the list (not of the messages): the session grows in place.
  tracker.sent = messages.slice();
  tracker.viaHook = options.viaHook;
  tracker.touched = [];
  if (previous === undefined) return undefined;
  let changedAt = firstChange(previous, messages);
  // An update in place keeps the object: only its notification shows it changed.
  for (const entry of touched)
    if (
      entry.by === "approval" &&
      entry.index < previous.length &&
      (changedAt === undefined || entry.index < changedAt)
    )
      changedAt = entry.index;
  if (changedAt === undefined) return undefined;
  return { changedAt, changedBy: causeAt(touched, changedAt, options, previousViaHook) };
}

/**
 * Notes that the loop itself changed `session` at `index` (steering added there): blamed when the
 * next request stops beginning with the previous one at or after that index.
 */
export function noteSessionChange(session: Session, index: number, by: PrefixCause): void {
  const tracker = trackers.get(session);
  if (tracker?.sent !== undefined && index < tracker.sent.length) tracker.touched.push({ index, by });
}

type Tracker = {
  sent: readonly Message[] | undefined;
  viaHook: boolean;
  /** Changes since the last request to messages it held, by index. */
  touched: { index: number; by: PrefixCause }[];
};

// Beside the session, as its listeners are: the session stays plain JSON.
const trackers = new WeakMap<Session, Tracker>();

function trackerOf(session: Session): Tracker {
  let tracker = trackers.get(session);
  if (tracker !== undefined) return tracker;
  const created: Tracker = { sent: undefined, viaHook: false, touched: [] };
  trackers.set(session, created);
  onSessionChange(session, (change) => {
    if (change.type === "append" || change.type === "keep" || change.type === "guardrail") return;
    noteSessionChange(session, change.index, causeOf(change));
  });
  tracker = created;
  return tracker;
}

function causeOf(change: SessionChange & { type: "replace" | "update" | "splice" }): PrefixCause {
  if (change.reason === "guardrail") return "guardrail";
  return change.type === "update" ? "approval" : "compaction";
}

// The index of the first message of `previous` that `sent` does not repeat; undefined when
// `sent` begins with all of `previous`.
function firstChange(previous: readonly Message[], sent: readonly Message[]): number | undefined {
  for (let index = 0; index < previous.length; index++) {
    const before = previous[index]!;
    const now = sent[index];
    if (now === before) continue;
    if (now === undefined || JSON.stringify(now) !== JSON.stringify(before)) return index;
  }
  return undefined;
}

// The earliest recorded change at or before where the request differs; else the hook's view or
// what the loop saw; else unknown.
function causeAt(
  touched: readonly { index: number; by: PrefixCause }[],
  changedAt: number,
  options: { viaHook: boolean; fallback: PrefixCause | undefined },
  previousViaHook: boolean,
): PrefixCause | "unknown" {
  let earliest: { index: number; by: PrefixCause } | undefined;
  for (const entry of touched)
    if (entry.index <= changedAt && (earliest === undefined || entry.index < earliest.index)) earliest = entry;
  if (earliest !== undefined) return earliest.by;
  if (options.viaHook || previousViaHook) return "hook";
  return options.fallback ?? "unknown";
}
