import type { JsonValue } from "../session.ts";

/**
 * A tool's output as it enters the session, which holds only plain JSON: `undefined` becomes `""`,
 * anything else goes through `JSON.stringify`. Throws for values JSON cannot hold (a cycle, a BigInt).
 */
export function toJsonOutput(output: unknown): JsonValue {
  if (output === undefined) return "";
  if (typeof output === "string" || typeof output === "boolean" || output === null) return output;
  if (typeof output === "number" && Number.isFinite(output)) return output;
  const text = JSON.stringify(output);
  if (text === undefined) return "";
  return JSON.parse(text) as JsonValue;
}
