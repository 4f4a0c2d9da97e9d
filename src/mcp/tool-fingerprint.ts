import { createHash } from "node:crypto";
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject, JsonValue } from "../session.ts";

/**
 * The sha256 (hex) of the canonical JSON of what a model is told of an MCP tool: its `name`,
 * `description`, `inputSchema`, `outputSchema` and `annotations` (keys sorted at every level, so
 * key order does not matter; absent fields left out). Two listings of a tool with the same
 * fingerprint say the same thing; any other change to those fields changes it.
 */
export function toolFingerprint(tool: McpTool): string {
  return createHash("sha256")
    .update(canonicalJson(toolDefinition(tool)))
    .digest("hex");
}

/** The fields of a tool `toolFingerprint` covers, as plain JSON: what a pin keeps to show a diff. */
export function toolDefinition(tool: McpTool): JsonObject {
  const definition: JsonObject = { name: tool.name };
  for (const field of ["description", "inputSchema", "outputSchema", "annotations"] as const) {
    const value = tool[field] as JsonValue | undefined;
    if (value !== undefined) definition[field] = JSON.parse(JSON.stringify(value)) as JsonValue;
  }
  return definition;
}

/** JSON with every object's keys sorted, so equal values give equal text whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(",")}]`;
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null";
  const keys = Object.keys(value).sort();
  const fields: string[] = [];
  for (const key of keys) {
    const field = (value as Record<string, unknown>)[key];
    if (field !== undefined) fields.push(`${JSON.stringify(key)}:${canonicalJson(field)}`);
  }
  return `{${fields.join(",")}}`;
}
