import type { JsonObject } from "../session.ts";

/**
 * A question a tool's server puts to the user mid-call (MCP `elicitation/create`): a form whose
 * answer must match `requestedSchema` (a flat JSON Schema object), or a URL for the user to open
 * themselves (`elicitationId` names it for the server). Untrusted text: escape it to show it.
 */
export type ElicitationRequest =
  | { mode: "form"; message: string; requestedSchema: JsonObject }
  | { mode: "url"; message: string; url: string; elicitationId: string };

/** The user's answer: `accept` (with the form's `content`), `decline`, or `cancel` (no answer). */
export type ElicitationAnswer =
  { action: "accept"; content?: JsonObject } | { action: "decline" } | { action: "cancel" };

/**
 * How a run asks its user on behalf of the tool call `id`: an `elicitation-request` event, answered
 * by `answerElicitation` on the run's handle. Resolves `cancel` when `signal` aborts first.
 */
export type ToolElicit = (
  id: string,
  server: string,
  request: ElicitationRequest,
  signal: AbortSignal,
) => Promise<ElicitationAnswer>;
