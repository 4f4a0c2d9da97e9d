import { errorResponse } from "./error-response.ts";
import { defaultMaxBodyBytes, readJsonBody } from "./read-json-body.ts";
import type { RunRegistry } from "./run-registry.ts";
import { AgentError, isAgentError } from "../errors.ts";
import { checkNumber } from "../numeric-options.ts";
import type { ElicitationAnswer } from "../tools/elicitation.ts";

export type ElicitationRequestHandlerOptions = {
  /** Where the run is: the registry its `agentStream` was started in. */
  registry: RunRegistry;
  /**
   * Whether the request's caller may answer for this run (a cookie, a token: the application's
   * own check). `false` answers 403 before anything is read.
   */
  authorize: (request: Request, runId: string) => boolean | Promise<boolean>;
  /** The largest body read (bytes, default 1 MiB); a larger one is a 413. */
  maxBodyBytes?: number;
};

/**
 * A handler for a page's answers to a run's `elicitation-request` events (MCP servers asking the
 * user): `POST` a JSON body `{ id, answer }`, `answer` being `{ action: "accept", content? }`,
 * `{ action: "decline" }` or `{ action: "cancel" }`; the run in the registry gets it with
 * `answerElicitation` (the MCP connection then checks form content against the request's schema).
 * 204 once given. Every refusal changes nothing: 405 (not POST), 403 (authorize said no), 415 (not
 * JSON), 413 (body too large), 400 (not an answer), 404 (no such run going), 409 (no such question
 * waits: answered, cancelled, timed out).
 */
export function elicitationRequestHandler(
  options: ElicitationRequestHandlerOptions,
): (request: Request, runId: string) => Promise<Response> {
  checkNumber("maxBodyBytes", options.maxBodyBytes, { min: 0, integer: true });
  if (typeof options.authorize !== "function")
    throw new AgentError("elicitationRequestHandler: authorize must be a function");
  if (typeof options.registry?.answerElicitation !== "function")
    throw new AgentError("elicitationRequestHandler: registry must be a RunRegistry (createRunRegistry())");
  const maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes;
  return async (request, runId) => {
    if (request.method !== "POST") return errorResponse(405, "send the answer with POST");
    if (!(await options.authorize(request, runId))) return errorResponse(403, "not allowed to answer for this run");
    const body = await readJsonBody(request, maxBodyBytes);
    if ("response" in body) return body.response;
    const { id, answer } = (isObject(body.value) ? body.value : {}) as { id?: unknown; answer?: unknown };
    if (typeof id !== "string" || !isObject(answer))
      return errorResponse(
        400,
        'send { "id": "<elicitation id>", "answer": { "action": "accept" | "decline" | "cancel", "content"?: { … } } }',
      );
    if (options.registry.status(runId) !== "running") return errorResponse(404, "no such run going");
    let given: boolean;
    try {
      given = options.registry.answerElicitation(runId, id, answer as ElicitationAnswer);
    } catch (error) {
      if (isAgentError(error)) return errorResponse(400, error.message);
      throw error;
    }
    if (!given) return errorResponse(409, "no such question waits in this run");
    return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
