import type { JsonObject } from "../session.ts";

/**
 * The instruction given to a model that has no native structured output: by the loop, or by an
 * adapter flagged native for a request its provider cannot constrain (e.g. Gemini with tools).
 */
export function outputInstruction(jsonSchema: JsonObject): string {
  return `When you give your final answer, reply with only a JSON value (no prose, no code fence) that matches this JSON Schema:\n${JSON.stringify(jsonSchema)}`;
}

/** Whether a JSON Schema describes an object (what OpenAI's native JSON-schema modes require at the root). */
export function hasObjectRoot(jsonSchema: JsonObject): boolean {
  return jsonSchema.type === "object";
}
