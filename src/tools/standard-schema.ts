import type { JsonObject } from "../session.ts";
import { formatPath, type ValidationResult } from "./validate-input.ts";

/**
 * The Standard Schema v1 interface (https://standardschema.dev), implemented by zod 4, valibot,
 * arktype and others, declared here so none of them is a dependency. `jsonSchema` is the optional
 * Standard JSON Schema extension: a schema that has it can describe itself to the model.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardSchemaV1.Result<Output> | Promise<StandardSchemaV1.Result<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    readonly jsonSchema?: {
      readonly input: (options: { readonly target: string }) => Record<string, unknown>;
    };
  };
}

// A namespace holding only types is erased at compile time, so it fits `erasableSyntaxOnly`.
// eslint-disable-next-line @typescript-eslint/no-namespace
export declare namespace StandardSchemaV1 {
  type Result<Output> = { readonly value: Output; readonly issues?: undefined } | { readonly issues: readonly Issue[] };
  type Issue = {
    readonly message: string;
    readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
  };
  type InferOutput<Schema extends StandardSchemaV1> = NonNullable<Schema["~standard"]["types"]>["output"];
}

export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { "~standard"?: { validate?: unknown } })["~standard"]?.validate === "function"
  );
}

/**
 * The JSON Schema a Standard Schema gives of itself (draft 2020-12, without its `$schema`), through
 * the Standard JSON Schema extension or arktype's own `toJsonSchema`; `undefined` when it has
 * neither. The one conversion for tool inputs and structured outputs alike: each caller says in
 * its own error what to pass instead.
 */
export function standardJsonSchema(schema: StandardSchemaV1): JsonObject | undefined {
  const describe = schema["~standard"].jsonSchema;
  if (describe !== undefined) return withoutDialect(describe.input({ target: "draft-2020-12" }));
  // arktype can describe itself, though not through the Standard JSON Schema interface yet.
  const toJsonSchema: unknown = "toJsonSchema" in schema ? schema.toJsonSchema : undefined;
  if (typeof toJsonSchema === "function") return withoutDialect(toJsonSchema.call(schema) as Record<string, unknown>);
  return undefined;
}

// The dialect is the loop's to choose, and some providers refuse a `$schema` key.
function withoutDialect(described: Record<string, unknown>): JsonObject {
  const { $schema: _dialect, ...jsonSchema } = described;
  return jsonSchema as JsonObject;
}

/** Checks a value with a Standard Schema; the message names each failing field by its path (`items[0].name: …`). */
export async function validateStandard(schema: StandardSchemaV1, value: unknown): Promise<ValidationResult> {
  const result = await schema["~standard"].validate(value);
  if (result.issues === undefined) return { ok: true, value: result.value };
  const problems = result.issues.map((issue) => {
    const path = (issue.path ?? []).map((segment) =>
      String(typeof segment === "object" && segment !== null && "key" in segment ? segment.key : segment),
    );
    return path.length > 0 ? `${formatPath(path)}: ${issue.message}` : issue.message;
  });
  return { ok: false, message: problems.join("; ") };
}
