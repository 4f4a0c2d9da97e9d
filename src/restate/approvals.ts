import { CancelledError, TerminalError, type ObjectContext, type ObjectSharedContext } from "@restatedev/restate-sdk";
import { findPendingCall, pendingApprovalEntries, recordDecisions, type ApprovalDecision } from "../tools/approval.ts";
import type { JsonObject, Session } from "../session.ts";
import type { ReplayClock } from "./replay-clock.ts";
import type { StepScheduler } from "./step-scheduler.ts";
import type { DurableTasks } from "./durable-tasks.ts";

/**
 * A tool call waiting for a human's decision, as the `pendingApprovals` handler lists it. `path`:
 * its id, or for a subagent's call the ids from the outer call down joined by `/`; unique where
 * ids need not be (see `PendingApprovalEntry`).
 */
export type PendingApprovalView = { id: string; path: string; name: string; input: JsonObject };

/**
 * The payload of `resolveApproval`: one decision, or several (all checked before any is applied).
 * `id` names one waiting call, by its id or its path; `approved` must be a boolean; `reason`
 * (optional) a string, shown to the model on a denial.
 */
export type ApprovalResolution = ({ id: string } & ApprovalDecision) | ({ id: string } & ApprovalDecision)[];

/** What `resolveApproval` answers: the ids decided, in the order given. */
export type ApprovalResolved = { resolved: string[] };

// State: the calls the run waits for, each with the awakeable its decision completes.
const approvalsKey = "approvals";
type WaitingApproval = PendingApprovalView & { awakeable: string };

/** The key of the gate that lets exactly one decision through for an awakeable. */
export const gateKey = (awakeable: string): string => `approval:${awakeable}`;

/**
 * The paused run's wait: one awakeable per waiting call (listed in the state for the shared
 * handlers), then the decisions in call order, each removed from the list as it is read. The
 * invocation suspends while it waits: it holds no worker. Once all are in, they are recorded in
 * the session with `resolveApproval`. Returns `false` when the run was cancelled while waiting
 * (nothing decided is recorded then: the loop answers the waiting calls as aborted).
 */
export async function waitForDecisions(
  ctx: ObjectContext,
  session: Session,
  clock: ReplayClock,
  scheduler: StepScheduler,
  tasks?: { whileWaiting: DurableTasks["whileWaiting"]; written: () => void },
): Promise<boolean> {
  const waits = pendingApprovalEntries(session).map(({ path, call }) => ({ path, call, ...ctx.awakeable<unknown>() }));
  const listed = (from: number): WaitingApproval[] =>
    waits
      .slice(from)
      .map(({ path, call, id }) => ({ id: call.id, path, name: call.name, input: call.input, awakeable: id }));
  ctx.set(approvalsKey, listed(0));
  const decisions: ({ path: string } & ApprovalDecision)[] = [];
  let cancelled = false;
  for (const [index, wait] of waits.entries()) {
    try {
      // Through the scheduler: background tasks' steps may be in flight while the run waits; the
      // tasks that end meanwhile are settled (their records written) as they end.
      const decision =
        tasks === undefined
          ? await scheduler.await(wait.promise)
          : await tasks.whileWaiting(wait.promise, tasks.written);
      decisions.push({ path: wait.path, ...asDecision(decision) });
    } catch (error) {
      if (!(error instanceof CancelledError)) throw error;
      cancelled = true;
      break;
    }
    ctx.set(approvalsKey, listed(index + 1));
  }
  ctx.clear(approvalsKey);
  // `ctx.date.now()` is this step, typed as a plain promise.
  clock.advance(await scheduler.await(ctx.run(() => Date.now())));
  if (!cancelled) recordDecisions(session, decisions, clock.now());
  return !cancelled;
}

/** The calls waiting for a decision (none when the run is not paused). */
export async function listPendingApprovals(ctx: ObjectSharedContext): Promise<PendingApprovalView[]> {
  return (await waitingApprovals(ctx)).map(({ id, path, name, input }) => ({ id, path, name, input }));
}

/**
 * The shared `resolveApproval` handler's work: checks the payload and that each decision names
 * exactly one waiting call (by id or path), then passes each through its gate (`decide`), which
 * completes the awakeable. Throws a `TerminalError` changing nothing: 400 for a malformed payload,
 * an id two waiting calls share (ambiguous: name it by its path) or two decisions for one call,
 * 404 for a call the session does not have, 409 for a call that is not waiting or was already decided.
 */
export async function resolveApprovals(
  ctx: ObjectSharedContext,
  agentName: string,
  session: Session,
  payload: unknown,
): Promise<ApprovalResolved> {
  const decisions = parseResolution(payload);
  const waiting = await waitingApprovals(ctx);
  const gates: { decision: GateInput; awakeable: string }[] = [];
  for (const decision of decisions) {
    const { id } = decision;
    const found = findPendingCall(waiting, id);
    if (found.type === "ambiguous")
      throw malformed(
        `"${id}" names ${found.paths.length} waiting calls (${found.paths.join(", ")}); name one by its path`,
      );
    if (found.type === "none") {
      const known = session.messages.some(
        (message) => "type" in message && message.type === "tool_call" && message.id === id,
      );
      throw new TerminalError(
        known ? `tool call "${id}" is not waiting for approval` : `no tool call "${id}" in this session`,
        { errorCode: known ? 409 : 404 },
      );
    }
    const { awakeable } = found.entry;
    if (gates.some((gate) => gate.awakeable === awakeable))
      throw malformed(`tool call "${found.entry.path}" is decided twice in one payload`);
    gates.push({ decision, awakeable });
  }
  for (const { decision, awakeable } of gates) {
    await ctx.genericCall({
      service: agentName,
      method: "decide",
      key: gateKey(awakeable),
      parameter: new TextEncoder().encode(JSON.stringify(decision)),
    });
  }
  return { resolved: decisions.map(({ id }) => id) };
}

// The list the paused run keeps; a path is missing only from a list written before paths existed.
async function waitingApprovals(ctx: ObjectSharedContext): Promise<WaitingApproval[]> {
  const waiting = (await ctx.get<(Omit<WaitingApproval, "path"> & { path?: string })[]>(approvalsKey)) ?? [];
  return waiting.map((entry) => ({ ...entry, path: entry.path ?? entry.id }));
}

type GateInput = { id: string } & ApprovalDecision;

/**
 * How long a gate keeps its decision. A late duplicate is refused by `resolveApprovals` as soon as
 * the run reads the decision (the call is no longer waiting); the gate covers only the race between
 * the two, and then clears itself so that approvals leave no state behind.
 */
export const gateRetentionMs = 24 * 60 * 60 * 1000;

/**
 * The exclusive `decide` handler, keyed by `gateKey(awakeable)`: the first decision completes the
 * awakeable and is kept; any later one is refused (409), so two resolutions racing cannot both
 * succeed. It schedules its own `forget` a day later. Not reachable from the ingress.
 */
export async function decideOnce(ctx: ObjectContext, input: GateInput, agentName: string): Promise<null> {
  if ((await ctx.get<GateInput>("decision")) !== null) {
    throw new TerminalError(`tool call "${input.id}" was already decided`, { errorCode: 409 });
  }
  ctx.set("decision", input);
  ctx.genericSend({
    service: agentName,
    method: "forget",
    key: ctx.key,
    parameter: new TextEncoder().encode("null"),
    delay: gateRetentionMs,
  });
  const decision: ApprovalDecision = { approved: input.approved };
  if (input.reason !== undefined) decision.reason = input.reason;
  if (input.by !== undefined) decision.by = input.by;
  ctx.resolveAwakeable(ctx.key.slice(gateKey("").length), decision);
  return null;
}

function parseResolution(payload: unknown): GateInput[] {
  const list = Array.isArray(payload) ? (payload as unknown[]) : [payload];
  if (list.length === 0) throw malformed("no decision given");
  const seen = new Set<string>();
  return list.map((entry) => {
    if (typeof entry !== "object" || entry === null || Array.isArray(entry))
      throw malformed("a decision must be an object { id, approved, reason? }");
    const { id, approved, reason, by } = entry as Record<string, unknown>;
    if (typeof id !== "string" || id === "")
      throw malformed("a decision needs the tool call's id (a non-empty string)");
    if (typeof approved !== "boolean") throw malformed(`the decision for "${id}" needs approved: true or false`);
    if (reason !== undefined && typeof reason !== "string") throw malformed(`the reason for "${id}" must be a string`);
    if (by !== undefined && typeof by !== "string")
      throw malformed(`the decision for "${id}": by (the id of who decided) must be a string`);
    if (seen.has(id)) throw malformed(`tool call "${id}" is decided twice in one payload`);
    seen.add(id);
    const decision: GateInput = { id, approved };
    if (reason !== undefined) decision.reason = reason;
    if (by !== undefined) decision.by = by;
    return decision;
  });
}

function malformed(problem: string): TerminalError {
  return new TerminalError(`resolveApproval: ${problem}`, { errorCode: 400 });
}

// A decision may also arrive by completing the awakeable directly (the ingress's awakeable API);
// anything but a well-formed decision denies the call rather than running it unapproved.
function asDecision(value: unknown): ApprovalDecision {
  if (typeof value === "object" && value !== null && typeof (value as ApprovalDecision).approved === "boolean") {
    const { approved, reason, by } = value as ApprovalDecision;
    const decision: ApprovalDecision = { approved };
    if (typeof reason === "string") decision.reason = reason;
    if (typeof by === "string") decision.by = by;
    return decision;
  }
  return { approved: false, reason: "the approval decision was malformed" };
}
