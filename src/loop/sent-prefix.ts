import { followSessionEdits, markSessionEdits, type Message, type Session, type SessionEdits } from "../session.ts";

/** What may change messages a model was already sent (the `cache` event's `changedBy`). */
export type PrefixCause = "compaction" | "steering" | "approval" | "hook" | "guardrail";

/** Where a request stopped beginning with the one before it, and what the loop knows changed it. */
export type PrefixChange = { changedAt: number; changedBy: PrefixCause | "unknown" };

/** What a run keeps for the `cache` event; made only for a run that can be heard. */
export type PrefixTracking = {
  /** A change the loop saw since the last model call that the session did not report (a `compaction` event). */
  changedBy: PrefixCause | undefined;
  /** Where this call's request stopped beginning with the last one's, until its `cache` event says so. */
  change: PrefixChange | undefined;
};

/**
 * Compares a request about to be sent with the last one sent for the same session, and says where
 * it first differs (`undefined`: it begins with all of the previous one, so a provider's prompt
 * cache can hold). The last request is kept beside the session, not in one run: the next run on
 * the same session (after a pause for approval, a follow-up task) is compared with it too.
 *
 * Most requests are the last one plus what the session gained since: the session's edit record
 * (`followSessionEdits`: replacements, updates in place, splices, each with its index) says no
 * message the last request held was touched, the list is the same array and still ends where the
 * last request ended, and the comparison is that, without a walk. Only after an edit (compaction's
 * cuts, an approval, steering before the end), an edit the session did not report (a list swapped
 * or spliced by hand, a strategy's `compaction` event: `fallback`), or a `beforeModelCall` hook's
 * view (`viaHook`) is the request walked message by message; the edit record names what changed it.
 * `offset` is where the session's messages begin in the request (1 after the output instruction).
 */
export function requestPrefixChange(
  session: Session,
  messages: readonly Message[],
  options: { viaHook: boolean; offset: number; fallback: PrefixCause | undefined },
): PrefixChange | undefined {
  const tracker = trackerOf(session);
  const { sent, edits } = tracker;
  const length = tracker.length;
  const untouched =
    edits.lowest + options.offset >= length &&
    tracker.steering >= length &&
    options.fallback === undefined &&
    !options.viaHook &&
    !tracker.viaHook &&
    length > 0 &&
    options.offset === tracker.offset &&
    session.messages === tracker.list &&
    messages.length >= length &&
    messages[length - 1] === sent[length - 1];
  let change: PrefixChange | undefined;
  if (untouched) for (let index = length; index < messages.length; index++) sent.push(messages[index]!);
  else {
    change = length === 0 ? undefined : walk(tracker, messages, options);
    sent.length = 0;
    for (const message of messages) sent.push(message);
  }
  tracker.length = messages.length;
  tracker.list = session.messages;
  tracker.offset = options.offset;
  tracker.viaHook = options.viaHook;
  tracker.steering = Infinity;
  markSessionEdits(edits);
  return change;
}

/**
 * Notes that the loop itself changed `session` at `index` (steering added there): blamed when the
 * next request stops beginning with the previous one at or after that index.
 */
export function noteSessionChange(session: Session, index: number): void {
  const tracker = trackers.get(session);
  if (tracker !== undefined && index < tracker.length && index < tracker.steering) tracker.steering = index;
}

type Tracker = {
  /** The messages of the last request (kept in step with it, not copied each time). */
  sent: Message[];
  /** How many: `sent` may hold more between a change and its walk. */
  length: number;
  /** The session's list the last request was made of, and where it began in the request. */
  list: readonly Message[] | undefined;
  offset: number;
  viaHook: boolean;
  /** The lowest index steering entered at since the last request (`Infinity`: none). */
  steering: number;
  edits: SessionEdits;
};

// Beside the session, as its listeners are: the session stays plain JSON.
const trackers = new WeakMap<Session, Tracker>();

function trackerOf(session: Session): Tracker {
  let tracker = trackers.get(session);
  if (tracker === undefined) {
    tracker = {
      sent: [],
      length: 0,
      list: undefined,
      offset: 0,
      viaHook: false,
      steering: Infinity,
      edits: followSessionEdits(session),
    };
    trackers.set(session, tracker);
  }
  return tracker;
}

// Message by message: where the request first differs from the last one, and what did it.
function walk(
  tracker: Tracker,
  messages: readonly Message[],
  options: { viaHook: boolean; offset: number; fallback: PrefixCause | undefined },
): PrefixChange | undefined {
  const { edits } = tracker;
  const edited = edits.lowest + options.offset;
  const editedBy = edits.lowestBy === undefined ? undefined : causeOf(edits.lowestBy);
  let changedAt = firstChange(tracker.sent, tracker.length, messages);
  // An update in place keeps the object: only the edit record shows it changed.
  if (editedBy === "approval" && edited < tracker.length && (changedAt === undefined || edited < changedAt))
    changedAt = edited;
  if (changedAt === undefined) return undefined;
  let changedBy: PrefixCause | "unknown";
  // The earliest recorded change at or before where the request differs; else the hook's view or
  // what the loop saw; else unknown.
  if (editedBy !== undefined && edited <= changedAt && edited <= tracker.steering) changedBy = editedBy;
  else if (tracker.steering <= changedAt) changedBy = "steering";
  else if (options.viaHook || tracker.viaHook) changedBy = "hook";
  else changedBy = options.fallback ?? "unknown";
  return { changedAt, changedBy };
}

function causeOf(reason: NonNullable<SessionEdits["lowestBy"]>): PrefixCause {
  if (reason === "guardrail") return "guardrail";
  return reason === "approval" ? "approval" : "compaction";
}

// The index of the first of the `length` messages of `previous` that `sent` does not repeat;
// undefined when `sent` begins with all of them.
function firstChange(previous: readonly Message[], length: number, sent: readonly Message[]): number | undefined {
  for (let index = 0; index < length; index++) {
    const before = previous[index]!;
    const now = sent[index];
    if (now === before) continue;
    if (now === undefined || JSON.stringify(now) !== JSON.stringify(before)) return index;
  }
  return undefined;
}
