import { executeToolCalls, type JsonObject, type Tool, type ToolResultMessage } from "simple-agent-loop";
import { codingTools } from "../../src/cli/tools/index.ts";

/** The CLI's coding tools in `root`, called the way the loop calls them (input validated, errors as results). */
export function toolsIn(root: string): {
  tools: Tool[];
  call: (name: string, input: JsonObject, signal?: AbortSignal) => Promise<ToolResultMessage>;
  callAll: (calls: [string, JsonObject][]) => Promise<ToolResultMessage[]>;
} {
  const tools = codingTools(root, { bash: { defaultTimeoutMs: 20_000, killGraceMs: 500 } });
  let next = 0;
  const callAll = (calls: [string, JsonObject][], signal?: AbortSignal): Promise<ToolResultMessage[]> =>
    executeToolCalls(
      calls.map(([name, input]) => ({ type: "tool_call", id: `call_${++next}`, name, input })),
      {},
      { tools, ...(signal === undefined ? {} : { signal }) },
    );
  return { tools, call: async (name, input, signal) => (await callAll([[name, input]], signal))[0]!, callAll };
}

/** A result's output as text. */
export function text(result: ToolResultMessage): string {
  return typeof result.output === "string" ? result.output : JSON.stringify(result.output);
}
