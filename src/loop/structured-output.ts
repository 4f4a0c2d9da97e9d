import { boundText, maxErrorLength } from "../errors.ts";
import type { JsonObject, JsonValue, Message, ModelMessage, Session } from "../session.ts";
import { schemaKind } from "../tools/schema-kind.ts";
import { validateStandard, type StandardSchemaV1 } from "../tools/standard-schema.ts";
import { validateToolInput, type ValidationResult } from "../tools/validate-input.ts";

/** A schema for the final answer: a JSON Schema object, or a Standard Schema (zod 4, valibot, arktype…). */
export type OutputSchema = JsonObject | StandardSchemaV1;

/** What the loop needs to hold the final answer to a schema. */
export type OutputContract = {
  /** The JSON Schema the model is shown (and adapters may enforce natively). */
  jsonSchema: JsonObject;
  /** Parses and validates an answer's text. */
  check: (text: string) => Promise<{ ok: true; value: JsonValue } | { ok: false; problems: string }>;
};

/**
 * What a run with an `output` schema keeps: the contract, the schema as every model call's
 * `context.output`, the system message that shows the model the schema (absent when the adapter
 * conveys it natively), and how many invalid final answers may still be sent back for correction.
 */
export type RunOutput = {
  readonly contract: OutputContract;
  readonly context: { jsonSchema: JsonObject };
  readonly instruction: Message | undefined;
  attemptsLeft: number;
};

export function outputContract(schema: OutputSchema): OutputContract {
  const kind = schemaKind(schema);
  const { jsonSchema } = kind;
  if (jsonSchema === undefined)
    throw new TypeError("output: this schema cannot produce a JSON Schema; pass a JSON Schema instead");
  const validate: (value: unknown) => ValidationResult | Promise<ValidationResult> =
    kind.type === "standard"
      ? (value) => validateStandard(kind.schema, value)
      : (value) => validateToolInput({ input_schema: jsonSchema }, value);
  return {
    jsonSchema,
    async check(text) {
      const parsed = parseJsonAnswer(text);
      if (!parsed.ok) return { ok: false, problems: "the answer is not valid JSON" };
      const result = await validate(parsed.value);
      // The stored value must stay plain JSON, whatever a schema's transform produced.
      return result.ok
        ? { ok: true, value: JSON.parse(JSON.stringify(result.value ?? null)) as JsonValue }
        : { ok: false, problems: result.message };
    },
  };
}

/**
 * Checks a final turn against the contract: the turn's assistant text is the answer. Valid: the
 * last assistant message carries the parsed value as `output`. Invalid: `problems` says why.
 */
export async function checkFinalAnswer(
  contract: OutputContract,
  messages: ModelMessage[],
): Promise<{ messages: ModelMessage[]; text: string; problems?: string }> {
  const answerIndex = messages.findLastIndex((message) => "role" in message);
  const text = messages.flatMap((message) => ("role" in message ? [message.content] : [])).join("");
  if (answerIndex === -1) return { messages, text, problems: "there is no answer text" };
  const checked = await contract.check(text);
  if (!checked.ok) return { messages, text, problems: checked.problems };
  return {
    messages: messages.map((message, index) =>
      index === answerIndex ? { ...message, output: checked.value } : message,
    ),
    text,
  };
}

/** The message sent back when an answer does not match. */
export function outputCorrection(problems: string): string {
  return `Your answer does not match the required JSON Schema: ${boundText(problems, maxErrorLength)}. Reply again with only the corrected JSON value.`;
}

// Models often wrap JSON in a Markdown fence even when told not to.
function parseJsonAnswer(text: string): { ok: true; value: unknown } | { ok: false } {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(trimmed);
  try {
    return { ok: true, value: JSON.parse(fenced?.[1] ?? trimmed) };
  } catch {
    return { ok: false };
  }
}

/**
 * The validated final answer of a run made with `output: schema`, typed from that schema (the
 * `output` field of the last assistant message). `undefined` if the session has none.
 */
export function structuredOutput<Schema extends OutputSchema>(
  session: Session,
  _schema?: Schema,
): (Schema extends StandardSchemaV1 ? StandardSchemaV1.InferOutput<Schema> : JsonValue) | undefined {
  for (let index = session.messages.length - 1; index >= 0; index--) {
    const message = session.messages[index]!;
    if ("role" in message && message.role === "assistant" && message.output !== undefined) {
      // The schema's output type is what the loop validated the value against.
      return message.output as never;
    }
  }
  return undefined;
}
