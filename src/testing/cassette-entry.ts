import type { ContentPart } from "../content-parts.ts";
import type { ModelStreamEvent } from "../model/model-stream-event.ts";
import type { ModelContext } from "../model/invoke-model.ts";
import type { JsonObject, Message, ModelMessage, Session } from "../session.ts";
import type { ToolSchema } from "../shared/tool-schema.ts";

/**
 * One line of a cassette file. A model call (`kind: "model"`) holds the request the loop gave the
 * model and the answer as it came; a tool call (`kind: "tool"`, with `tools: "record"`) holds the
 * call and its result. Entries are in the order they happened; a failed attempt is an entry of its
 * own, so retries replay too.
 */
export type CassetteEntry = CassetteModelEntry | CassetteToolEntry;

export type CassetteModelEntry = {
  kind: "model";
  /** The model calls of the file counted from 1, in file order (as `iteration` counts in a run without retries). */
  call: number;
  /** `context.iteration` of the call. */
  iteration: number;
  /** The run's `agentName` (a subagent's name for its calls), when it has one. */
  agent?: string;
  request: CassetteRequest;
  answer: CassetteAnswer;
};

export type CassetteToolEntry = {
  kind: "tool";
  id: string;
  name: string;
  input: unknown;
  agent?: string;
  /** What the handler gave: the output as the loop stores it, and whether it was an error. */
  result: { output: unknown; isError?: boolean; content?: ContentPart[] };
};

/** What the model was asked: its view of the session without clock readings, the tool schemas, the settings. */
export type CassetteRequest = {
  messages: Message[];
  tools: ToolSchema[];
  settings?: JsonObject;
  output?: JsonObject;
};

/** The answer as it came: streamed events with their time (ms since the call began), messages, or a typed failure. */
export type CassetteAnswer =
  | { type: "stream"; events: { ms: number; event: ModelStreamEvent }[]; error?: RecordedError; ms: number }
  | { type: "messages"; messages: ModelMessage[]; ms: number }
  | { type: "error"; error: RecordedError; ms: number };

/** A thrown error as plain data: enough to throw an equivalent one on replay (name, retryable, status…). */
export type RecordedError = {
  name: string;
  message: string;
  retryable?: boolean;
  status?: number;
  retryAfterMs?: number;
  provider?: string;
  code?: string;
};

/**
 * Fields a message gets from the run, not from the model, and no adapter sends: the clock's
 * (`ts`, `waitMs`, `durationMs`) and the record of a tool's side effects (`checkpoint`: a file's
 * content before a write, which a replay that does not run the tool cannot have), and the time a
 * call's approval was decided (`approval.at`). Left out of what is recorded and compared.
 */
const volatileFields = new Set(["ts", "waitMs", "durationMs", "checkpoint"]);

/** The request as a cassette stores and compares it: plain JSON, clock readings left out. */
export function cassetteRequest(tools: ToolSchema[], session: Session, context: ModelContext): CassetteRequest {
  const request: CassetteRequest = {
    messages: session.messages.map((message) => withoutVolatile(message) as Message),
    tools: tools.map((schema) => plain(schema) as ToolSchema),
  };
  if (context.settings !== undefined) request.settings = plain(context.settings) as JsonObject;
  if (context.output !== undefined) request.output = plain(context.output) as JsonObject;
  return request;
}

function withoutVolatile(message: Message): unknown {
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(message)) {
    if (volatileFields.has(key) || value === undefined) continue;
    // A call's approval is compared, but not when it was decided (`at`, the clock's).
    copy[key] = key === "approval" ? withoutClock(value) : plain(value);
  }
  return copy;
}

function withoutClock(approval: unknown): unknown {
  const copy = plain(approval);
  if (typeof copy === "object" && copy !== null && "at" in copy) delete (copy as { at?: unknown }).at;
  return copy;
}

/** A JSON round trip: what the file will hold, so a fresh request compares equal to a read one. */
export function plain(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

/** The error as data, keeping the fields the loop's retry and fallback read. */
export function recordError(error: unknown): RecordedError {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  const fields = error as Error & Partial<Omit<RecordedError, "name" | "message">>;
  const recorded: RecordedError = { name: error.name, message: error.message };
  if (typeof fields.retryable === "boolean") recorded.retryable = fields.retryable;
  if (typeof fields.status === "number") recorded.status = fields.status;
  if (typeof fields.retryAfterMs === "number") recorded.retryAfterMs = fields.retryAfterMs;
  if (typeof fields.provider === "string") recorded.provider = fields.provider;
  if (typeof fields.code === "string") recorded.code = fields.code;
  return recorded;
}
