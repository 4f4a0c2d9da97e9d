import type { JsonObject } from "../session.ts";
import { plainJsonSchema } from "./json-schema.ts";
import { isStandardSchema, standardJsonSchema, type StandardSchemaV1 } from "./standard-schema.ts";

/**
 * What a schema a user gave (a tool's input, a run's `output`) is, for the model and for checking:
 * - `json-schema`: a JSON Schema object, or one typed by `jsonSchema<T>()`. The model is shown
 *   `jsonSchema`, and values are validated against it, synchronously.
 * - `standard`: any other Standard Schema (zod 4, valibot, arktype…). Values are validated by its
 *   own `validate`; the model is shown `jsonSchema`, the JSON Schema it gives of itself, or
 *   `undefined` when it cannot (each caller says in its own error what to pass instead).
 */
export type SchemaKind =
  | { type: "json-schema"; jsonSchema: JsonObject }
  | { type: "standard"; schema: StandardSchemaV1; jsonSchema: JsonObject | undefined };

/**
 * Sorts a schema into its `SchemaKind`, the one place that does. `shown`, when given, is the JSON
 * Schema the model sees instead of the schema's own (and, for a JSON Schema, the one values are
 * validated against); a Standard Schema is then never asked to describe itself.
 */
export function schemaKind(schema: StandardSchemaV1 | JsonObject, shown?: JsonObject): SchemaKind {
  const plain = plainJsonSchema(schema);
  if (plain !== undefined) return { type: "json-schema", jsonSchema: shown ?? plain };
  if (isStandardSchema(schema)) return { type: "standard", schema, jsonSchema: shown ?? standardJsonSchema(schema) };
  return { type: "json-schema", jsonSchema: shown ?? schema };
}
