import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject } from "../session.ts";
import type { ElicitationAnswer, ElicitationRequest } from "../tools/elicitation.ts";
import type { ToolContext } from "../tools/tool.ts";
import { validateToolInput } from "../tools/validate-input.ts";

/**
 * Answers a server's question to the user (`elicitation/create`). `toolCallId`: the tool call in
 * flight on that server when it asked (the latest started, when several are), if any. `signal`
 * aborts when the server cancels the request, the connection closes, or `elicitationTimeoutMs`
 * passes: answer `cancel` then. A throw answers `cancel`. Open no URL without the user's consent:
 * show it, host set apart, and let them choose.
 */
export type McpElicitationHandler = (
  request: ElicitationRequest,
  context: { server: string; toolCallId?: string; signal: AbortSignal },
) => ElicitationAnswer | Promise<ElicitationAnswer>;

/** What the request handler of one server reads. */
export type ElicitationSetup = {
  server: string;
  /** The server's calls in flight, oldest first (see `ToolServer.calls`). */
  calls: ReadonlyMap<string, ToolContext>;
  answerWith: McpElicitationHandler | "events";
  timeoutMs: number;
  /** Aborted when the connection closes. */
  closed: AbortSignal;
  /** Makes the JSON-RPC invalid-params error the server gets for content that fails its schema. */
  invalidParams: (message: string) => Error;
};

const cancel: ElicitationAnswer = { action: "cancel" };

/** The `elicitation/create` request handler of one server. */
export function elicitationRequestHandler(
  setup: ElicitationSetup,
): (request: ElicitRequest, extra: { signal: AbortSignal }) => Promise<ElicitResult> {
  return async ({ params }, extra) => {
    const request: ElicitationRequest =
      params.mode === "url"
        ? { mode: "url", message: params.message, url: params.url, elicitationId: params.elicitationId }
        : { mode: "form", message: params.message, requestedSchema: params.requestedSchema as JsonObject };
    const toolCallId = [...setup.calls.keys()].at(-1);
    const call = toolCallId === undefined ? undefined : setup.calls.get(toolCallId);
    const timeout = AbortSignal.timeout(setup.timeoutMs);
    const signal = AbortSignal.any([extra.signal, setup.closed, timeout, ...(call === undefined ? [] : [call.signal])]);
    const answer = await ask(setup, request, { toolCallId, call, signal });
    if (answer.action !== "accept") return { action: answer.action };
    if (request.mode === "url") return { action: "accept" };
    const content = answer.content ?? {};
    const checked = validateToolInput({ input_schema: request.requestedSchema }, content);
    const result = checked instanceof Promise ? await checked : checked;
    // Content the schema refuses never reaches the server: it learns which field was wrong.
    if (!result.ok) throw setup.invalidParams(`the answer does not match requestedSchema: ${result.message}`);
    return { action: "accept", content: content as ElicitResult["content"] };
  };
}

async function ask(
  setup: ElicitationSetup,
  request: ElicitationRequest,
  { toolCallId, call, signal }: { toolCallId: string | undefined; call: ToolContext | undefined; signal: AbortSignal },
): Promise<ElicitationAnswer> {
  if (signal.aborted) return cancel;
  let answering: Promise<ElicitationAnswer>;
  try {
    if (setup.answerWith === "events") {
      // Only a run that can hear the event can answer it: no call in flight, nobody to ask.
      if (call?.elicit === undefined) return cancel;
      answering = call.elicit(setup.server, request, signal);
    } else {
      const context = { server: setup.server, signal, ...(toolCallId === undefined ? {} : { toolCallId }) };
      answering = Promise.resolve(setup.answerWith(request, context));
    }
  } catch {
    return cancel;
  }
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<ElicitationAnswer>((resolve) => {
    onAbort = () => resolve(cancel);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const answer = await Promise.race([answering, aborted]);
    // An answer given once the question was cancelled (its time ran out) counts for nothing.
    return wellFormed(answer) && !signal.aborted ? answer : cancel;
  } catch {
    return cancel;
  } finally {
    signal.removeEventListener("abort", onAbort!);
  }
}

// A handler's answer of another shape is no consent to anything.
function wellFormed(answer: unknown): answer is ElicitationAnswer {
  const { action, content } = (typeof answer === "object" && answer !== null ? answer : {}) as {
    action?: unknown;
    content?: unknown;
  };
  if (action === "decline" || action === "cancel") return true;
  return (
    action === "accept" &&
    (content === undefined || (typeof content === "object" && content !== null && !Array.isArray(content)))
  );
}
