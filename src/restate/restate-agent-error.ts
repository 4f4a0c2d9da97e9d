import { AgentError, isAgentError } from "../errors.ts";

/**
 * A call through the Restate ingress (or admin API) failed. `status` is the HTTP status: for the
 * agent's own refusals 400 (malformed input), 404 (no such session or tool call), 409 (a call not
 * waiting, or already decided), 500 for a failed run; `message` is the server's. Status 0: the
 * server could not be reached (`cause` says why; retryable).
 */
export class RestateAgentError extends AgentError {
  override name = "RestateAgentError";
  readonly status: number;

  constructor(message: string, status: number, options: { cause?: unknown } = {}) {
    super(message, { retryable: status === 0 || status === 408 || status === 429 || status >= 502, ...options });
    this.status = status;
  }
}

export function isRestateAgentError(error: unknown): error is RestateAgentError {
  return isAgentError(error) && error.name === "RestateAgentError";
}
