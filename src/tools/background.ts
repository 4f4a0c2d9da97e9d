import { AgentError, describeValue } from "../errors.ts";
import type { JsonObject } from "../session.ts";
import type { ToolSchema } from "../shared/tool-schema.ts";

export type { BackgroundOption } from "../shared/tool-schema.ts";

/** The `background` option read: how a tool's calls become tasks. */
export type Background = { readonly when: "always" | "asked"; readonly onRestart: "rerun" | "lost" };

/** The input property the model sets to run a call of a `when: "asked"` tool in the background. */
export const runInBackgroundName = "run_in_background";

/**
 * Throws an `AgentError` naming the option unless `value` is a valid `background` option of tool
 * `name` (`undefined` passes).
 */
export function checkBackground(name: string, value: unknown): void {
  if (value === undefined || typeof value === "boolean") return;
  const option = `tool "${name}": background`;
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new AgentError(`${option} must be true, false or { when?, onRestart? }; got ${describeValue(value)}`);
  for (const key of Object.keys(value))
    if (key !== "when" && key !== "onRestart") throw new AgentError(`${option} has no option "${key}"`);
  const { when, onRestart } = value as { when?: unknown; onRestart?: unknown };
  if (when !== undefined && when !== "always" && when !== "asked")
    throw new AgentError(`${option}.when must be "always" or "asked"; got ${describeValue(when)}`);
  if (onRestart !== undefined && onRestart !== "rerun" && onRestart !== "lost")
    throw new AgentError(`${option}.onRestart must be "rerun" or "lost"; got ${describeValue(onRestart)}`);
}

/** How the calls of `definition` become tasks, or `undefined` when they never do. */
export function backgroundOf(definition: ToolSchema | undefined): Background | undefined {
  const option = definition?.background;
  if (option === undefined || option === false) return undefined;
  if (option === true) return always;
  return { when: option.when ?? "always", onRestart: option.onRestart ?? "lost" };
}

const always: Background = { when: "always", onRestart: "lost" };

/** Whether a call with `input` becomes a task: every call for `"always"`, one with `run_in_background: true` for `"asked"`. */
export function isTaskCall(background: Background, input: JsonObject): boolean {
  return background.when === "always" || input[runInBackgroundName] === true;
}

/** The input as the handler and the validation see it: without `run_in_background` (for an `"asked"` tool). */
export function handlerInput(background: Background | undefined, input: JsonObject): JsonObject {
  if (background?.when !== "asked" || !(runInBackgroundName in input)) return input;
  const { [runInBackgroundName]: _asked, ...rest } = input;
  return rest;
}

/** The input schema the model is shown for an `"asked"` tool: the tool's own, with the optional `run_in_background`. */
export function askedInputSchema(schema: JsonObject): JsonObject {
  const properties = typeof schema.properties === "object" && schema.properties !== null ? schema.properties : {};
  return {
    ...schema,
    properties: {
      ...(properties as JsonObject),
      [runInBackgroundName]: {
        type: "boolean",
        description:
          "true: run this call as a background task. You get its task id at once and its outcome later, as a message.",
      },
    },
  };
}
