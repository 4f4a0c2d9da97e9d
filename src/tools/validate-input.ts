import { Validator, type OutputUnit } from "@cfworker/json-schema";
import type { JsonObject } from "../session.ts";

export type ValidationResult = { ok: true; value: unknown } | { ok: false; message: string };

/** What `validateToolInput` needs of a tool: its JSON Schema, and its own check if it has one. */
type ValidatedTool = {
  name?: string;
  description?: string;
  input_schema: JsonObject;
  validate?: (input: unknown) => ValidationResult | Promise<ValidationResult>;
};

type Check = (input: unknown) => ValidationResult;

// One compiled check per schema object: schemas are defined once and reused every turn.
const checks = new WeakMap<JsonObject, Check>();

/**
 * Checks a tool call's input before its handler runs: with the tool's own `validate` (a Standard
 * Schema, from `tool()`), else against its JSON Schema. The message names each failing field.
 */
export function validateToolInput(
  definition: ValidatedTool,
  input: unknown,
): ValidationResult | Promise<ValidationResult> {
  if ("validate" in definition && definition.validate !== undefined) return definition.validate(input);
  const schema = definition.input_schema;
  let check = checks.get(schema);
  if (check === undefined) {
    check = compile(schema);
    checks.set(schema, check);
  }
  return check(input);
}

function compile(schema: JsonObject): Check {
  // Draft 2020-12 (what zod and most tools emit); `shortCircuit: false` reports every failing field.
  const validator = new Validator(schema, "2020-12", false);
  const full: Check = (input) => {
    const result = validator.validate(input);
    return result.valid ? { ok: true, value: input } : { ok: false, message: describeErrors(result.errors) };
  };
  const fast = compileFlatObject(schema);
  if (fast === undefined) return full;
  // The fast check decides validity alone; the full validator only words the failures.
  return (input) => (fast(input) ? { ok: true, value: input } : full(input));
}

const annotations = new Set(["description", "title", "default", "examples", "$schema", "$comment"]);
const primitiveTypes: Record<string, (value: unknown) => boolean> = {
  string: (value) => typeof value === "string",
  number: (value) => typeof value === "number" && Number.isFinite(value),
  integer: (value) => Number.isInteger(value),
  boolean: (value) => typeof value === "boolean",
  null: (value) => value === null,
};

/**
 * Most tool schemas are a flat object of typed primitives. For exactly that shape (nothing else:
 * any other keyword falls back to the full validator) the check is a few property reads instead
 * of a generic walk that builds a JSON pointer per property.
 */
function compileFlatObject(schema: JsonObject): ((input: unknown) => boolean) | undefined {
  const { type, properties = {}, required = [], additionalProperties = true, ...rest } = schema;
  if (type !== "object" || !Object.keys(rest).every((key) => annotations.has(key))) return undefined;
  if (typeof properties !== "object" || properties === null || Array.isArray(properties)) return undefined;
  if (!Array.isArray(required) || !required.every((name) => typeof name === "string")) return undefined;
  if (typeof additionalProperties !== "boolean") return undefined;
  const propertyChecks: [string, (value: unknown) => boolean][] = [];
  for (const [name, property] of Object.entries(properties)) {
    if (typeof property !== "object" || property === null || Array.isArray(property)) return undefined;
    const { type: propertyType, enum: allowed, ...others } = property;
    if (!Object.keys(others).every((key) => annotations.has(key))) return undefined;
    // The schema may come from an MCP server: `type: "constructor"` must not find Object.prototype's.
    const typeCheck =
      typeof propertyType === "string" && Object.hasOwn(primitiveTypes, propertyType)
        ? primitiveTypes[propertyType]
        : undefined;
    if (typeCheck === undefined) return undefined;
    if (allowed === undefined) propertyChecks.push([name, typeCheck]);
    else if (Array.isArray(allowed) && allowed.every((value) => value === null || typeof value !== "object")) {
      propertyChecks.push([name, (value) => typeCheck(value) && allowed.includes(value as never)]);
    } else return undefined;
  }
  const requiredNames = required;
  // Names and checks side by side, read by index: a check on every call allocates nothing.
  const names = propertyChecks.map(([name]) => name);
  const checks = propertyChecks.map(([, check]) => check);
  const known = new Set(names);
  return (input) => {
    if (typeof input !== "object" || input === null || Array.isArray(input)) return false;
    const record = input as Record<string, unknown>;
    for (let index = 0; index < requiredNames.length; index++)
      if (!Object.hasOwn(record, requiredNames[index]!)) return false;
    for (let index = 0; index < names.length; index++) {
      const name = names[index]!;
      if (Object.hasOwn(record, name) && !checks[index]!(record[name])) return false;
    }
    if (!additionalProperties) for (const name in record) if (!known.has(name)) return false;
    return true;
  };
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

/** `["items", "0", "name"]` → `items[0].name`. */
export function formatPath(path: readonly string[]): string {
  let text = "";
  for (const segment of path) {
    if (/^\d+$/.test(segment)) text += `[${segment}]`;
    else text += text === "" ? segment : `.${segment}`;
  }
  return text;
}
