// What the agent tests script a model's turns and tools with: a call, an answer, a tool that
// notes each run in a log (`log.push("<name> ran")`), so a test sees what ran and in what order.
import { tool, type Tool } from "simple-agent-loop";

/** A tool call without input. */
export const call = (id: string, name: string) => ({ type: "tool_call" as const, id, name, input: {} });

/** A final answer. */
export const answer = (content: string) => ({ role: "assistant" as const, content });

/** A tool without input that pushes `<name> ran` to `log` and returns `result`; `requireApproval` as `tool()` takes it. */
export function loggingTool(
  log: string[],
  name: string,
  result: string,
  options: { requireApproval?: boolean } = {},
): Tool {
  return tool({
    name,
    description: `${name[0]!.toUpperCase()}${name.slice(1)}.`,
    inputSchema: { type: "object", properties: {} },
    ...(options.requireApproval === undefined ? {} : { requireApproval: options.requireApproval }),
    handler: () => {
      log.push(`${name} ran`);
      return result;
    },
  });
}
