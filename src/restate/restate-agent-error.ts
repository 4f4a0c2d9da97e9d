import { AgentError, isAgentError } from "../errors.ts";

/**
 * A call through the Restate ingress (or admin API) failed. `status` is the HTTP status: for the
 * agent's own refusals 400 (malformed input), 404 (no such session or tool call), 409 (a call not
 * waiting, or already decided), 500 for a failed run; `message` is the server's.
 */
export class RestateAgentError extends AgentError {
  override name = "RestateAgentError";
  readonly status: number;

  constructor(message: string, status: number) {
    super(message, { retryable: status === 408 || status === 429 || status >= 502 });
    this.status = status;
  }
}

export function isRestateAgentError(error: unknown): error is RestateAgentError {
  return isAgentError(error) && error.name === "RestateAgentError";
}
