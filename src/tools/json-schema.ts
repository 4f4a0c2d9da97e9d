import { AgentError } from "../errors.ts";
import type { JsonObject } from "../session.ts";
import type { StandardSchemaV1 } from "./standard-schema.ts";
import { validateToolInput } from "./validate-input.ts";

/**
 * A JSON Schema that carries the TypeScript type it describes, made by `jsonSchema<T>()`. It is a
 * Standard Schema too, so it goes wherever one does (`tool()`'s `inputSchema`, the loop's
 * `output`), and the type follows: the handler's input, or `structuredOutput`'s value, is `T`.
 */
export type JsonSchema<T> = StandardSchemaV1<T, T> & {
  /** The JSON Schema as given (shown to the model, and what the input is validated against). */
  readonly jsonSchema: JsonObject;
};

/**
 * Types a plain JSON Schema, for tools and outputs without a schema library:
 * `tool({ name, description, inputSchema: jsonSchema<{ path: string }>({ type: "object", … }), handler })`
 * gives the handler `input: { path: string }`. The loop validates the model's input against the
 * schema (draft 2020-12) before the handler sees it, as for any JSON Schema. `T` is a promise you
 * make: nothing checks that it matches the schema. Throws an `AgentError` for a schema that is not
 * a JSON object.
 */
export function jsonSchema<T = unknown>(schema: JsonObject): JsonSchema<T> {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema))
    throw new AgentError("jsonSchema: the schema must be a JSON Schema object");
  const definition = { name: "jsonSchema", description: "", input_schema: schema };
  return {
    jsonSchema: schema,
    "~standard": {
      version: 1,
      vendor: jsonSchemaVendor,
      validate: (value) => {
        const result = validateToolInput(definition, value);
        // A definition without `validate` is checked synchronously against its JSON Schema.
        if (result instanceof Promise) throw new AgentError("jsonSchema: unexpected asynchronous validation");
        return result.ok ? { value: result.value as T } : { issues: [{ message: result.message }] };
      },
      jsonSchema: { input: () => schema },
    },
  };
}

/** The `~standard.vendor` of schemas made by `jsonSchema()`. */
const jsonSchemaVendor = "simple-agent-loop";

/** The plain JSON Schema behind a `jsonSchema()` value, or `undefined` for any other schema. */
export function plainJsonSchema(schema: unknown): JsonObject | undefined {
  if (typeof schema !== "object" || schema === null) return undefined;
  const candidate = schema as Partial<JsonSchema<unknown>>;
  return candidate["~standard"]?.vendor === jsonSchemaVendor && typeof candidate.jsonSchema === "object"
    ? candidate.jsonSchema
    : undefined;
}
