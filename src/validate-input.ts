import { Validator, type OutputUnit } from "@cfworker/json-schema";
import type { JsonObject } from "./session.ts";
import type { ToolDefinition, ValidationResult } from "./tools.ts";
import { formatPath } from "./tools.ts";

// One compiled validator per schema object: schemas are defined once and reused every turn.
const validators = new WeakMap<JsonObject, Validator>();

/**
 * Checks a tool call's input before its handler runs: with the tool's own `validate` (a Standard
 * Schema, from `tool()`), else against its JSON Schema. The message names each failing field.
 */
export function validateToolInput(
  definition: ToolDefinition,
  input: unknown,
): ValidationResult | Promise<ValidationResult> {
  if ("validate" in definition && definition.validate !== undefined) return definition.validate(input);
  const schema = definition.input_schema;
  let validator = validators.get(schema);
  if (validator === undefined) {
    // Draft 2020-12 (what zod and most tools emit); `shortCircuit: false` reports every failing field.
    validator = new Validator(schema, "2020-12", false);
    validators.set(schema, validator);
  }
  const result = validator.validate(input);
  if (result.valid) return { ok: true, value: input };
  return { ok: false, message: describeErrors(result.errors) };
}

// The validator reports each failure twice: once at the leaf ("#/a: type") and once at every
// container that holds it ("#: properties"). Keep the leaves; they name the field.
const containerKeywords = new Set(["properties", "items", "prefixItems", "allOf", "$ref", "false"]);

function describeErrors(errors: readonly OutputUnit[]): string {
  const leaves = errors.filter((error) => !containerKeywords.has(error.keyword));
  const shown = leaves.length > 0 ? leaves : errors;
  const lines = shown.map((error) => {
    const path = error.instanceLocation
      .replace(/^#\/?/, "")
      .split("/")
      .filter((segment) => segment !== "")
      .map((segment) => decodeURIComponent(segment).replace(/~1/g, "/").replace(/~0/g, "~"));
    const where = path.length > 0 ? `${formatPath(path)}: ` : "";
    return `${where}${error.error}`;
  });
  return [...new Set(lines)].join("; ");
}
