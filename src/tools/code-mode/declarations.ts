import type { JsonObject, JsonValue } from "../../session.ts";
import type { ToolDefinition } from "../tool.ts";

/**
 * The TypeScript a program is written against: `declare const tools: { ... }` with one async
 * function per tool, its description and each property's as doc comments, its input typed from the
 * JSON Schema (a name that is no identifier quoted), its result `unknown`, or the type of the
 * tool's `outputSchema` (an MCP tool's) where it has one. Bounded: a schema nested deeper than a few
 * levels, or a construct without a plain TypeScript reading, is typed `unknown`.
 */
export function codeModeDeclarations(tools: readonly ToolDefinition[]): string {
  const members = tools.map((definition) => {
    const input = typeOf(definition.input_schema, 1);
    const output =
      "outputSchema" in definition && isObject(definition.outputSchema)
        ? typeOf(definition.outputSchema, 1)
        : "unknown";
    return `${docComment(definition.description, "  ")}  ${propertyName(definition.name)}(input: ${input}): Promise<${output}>;`;
  });
  return `declare const tools: {\n${members.join("\n")}\n};`;
}

const maxDepth = 6;

// A JSON Schema as a TypeScript type, `indent` levels deep.
function typeOf(schema: JsonValue | undefined, depth: number): string {
  if (!isObject(schema) || depth > maxDepth) return "unknown";
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value)).join(" | ") || "never";
  if ("const" in schema) return JSON.stringify(schema.const);
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = schema[key];
    if (Array.isArray(options)) return options.map((option) => typeOf(option, depth + 1)).join(" | ") || "unknown";
  }
  const type = schema.type;
  if (Array.isArray(type)) return type.map((one) => typeOf({ ...schema, type: one }, depth)).join(" | ");
  switch (type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array": {
      const items = typeOf(schema.items, depth + 1);
      return /^[\w"]+$/.test(items) ? `${items}[]` : `Array<${items}>`;
    }
    case "object":
      return objectType(schema, depth);
    default:
      return isObject(schema.properties) ? objectType(schema, depth) : "unknown";
  }
}

function objectType(schema: JsonObject, depth: number): string {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const indent = "  ".repeat(depth + 1);
  const lines = Object.entries(properties).map(([name, property]) => {
    const description = isObject(property) && typeof property.description === "string" ? property.description : "";
    const optional = required.has(name) ? "" : "?";
    return `${docComment(description, indent)}${indent}${propertyName(name)}${optional}: ${typeOf(property, depth + 1)};`;
  });
  if (lines.length === 0) return schema.additionalProperties === false ? "{}" : "Record<string, unknown>";
  return `{\n${lines.join("\n")}\n${"  ".repeat(depth)}}`;
}

// A doc comment that no description can close early.
function docComment(text: string | undefined, indent: string): string {
  const trimmed = text?.trim() ?? "";
  if (trimmed === "") return "";
  const lines = trimmed.replaceAll("*/", "*\\/").split("\n");
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((line) => `${indent} * ${line}`.trimEnd()).join("\n")}\n${indent} */\n`;
}

function propertyName(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
