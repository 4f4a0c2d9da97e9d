import { tool, type Tool } from "simple-agent-loop";

/** A tool answering about 1 KB per key: a program of 20 lookups has a record of about 20 KB. */
export const lookup: Tool = tool({
  name: "lookup",
  description: "Looks up.",
  inputSchema: { type: "object", properties: { key: { type: "number" } }, required: ["key"] },
  handler: (input) => `record ${String(input.key)}: ${"x".repeat(1000)}`,
});
