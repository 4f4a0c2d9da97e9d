import { ApprovalPause } from "../tools/approval-pause.ts";
import { pendingApprovals } from "../tools/approval.ts";
import type { InvokeModel } from "../model/invoke-model.ts";
import { agentLoop } from "./loop.ts";
import { checkLoopOptions, type AgentLoopOptions } from "./loop-options.ts";
import type { ContentPart } from "../content-parts.ts";
import { forkSession, initSession, isToolResult, response, type JsonObject, type Session } from "../session.ts";
import { toolContent, type ToolContent } from "../tools/tool-content.ts";
import { structuredOutput, type OutputSchema } from "./structured-output.ts";
import type { Tool, ToolContext, ToolDefinition, ToolHandlers } from "../tools/tool.ts";
import { checkBackground, type BackgroundOption } from "../tools/background.ts";

export type SubagentToolOptions = {
  name: string;
  description: string;
  systemPrompt: string;
  invokeModel: InvokeModel;
  tools?: readonly ToolDefinition[];
  toolHandlers?: ToolHandlers;
  /** The subagent's own cap on model calls (default `defaultMaxIterations`). */
  maxIterations?: number;
  /** The subagent's final answer must match this schema; the tool then returns the parsed value. */
  output?: OutputSchema;
  /** The input the parent's model gives (default: `{ prompt: string }`). */
  inputSchema?: JsonObject;
  /** The first user message of each run, from the input (default: `input.prompt`). */
  prompt?: (input: Record<string, unknown>) => string;
  /** Other options of the inner loop (compaction, hooks, retries…). */
  loopOptions?: Omit<AgentLoopOptions, "toolHandlers" | "maxIterations" | "output" | "signal" | "name">;
  /** Calls run as background tasks: answered at once, the subagent's answer delivered later (see `BackgroundOption`). */
  background?: BackgroundOption;
};

/**
 * An agent as a tool: each call runs a fresh session with its own system prompt,
 * tools and model, and returns the final text (or structured output); images and files its
 * tools returned come with the text as the result's content parts (`subagentAnswer`). The inner run's events
 * reach the parent as `tool-execution-update` events of the parent's call; an abort of the
 * parent stops it. If the inner run pauses for approval, the parent's call pauses too: its
 * session travels in the parent's session, decisions are taken through the parent
 * (`pendingApprovals` / `resolveApproval`), and the next parent run resumes it.
 */
export function subagentTool(options: SubagentToolOptions): Tool<Record<string, unknown>> {
  // A bad option would otherwise surface only as every call's error result.
  checkLoopOptions(
    {
      ...options.loopOptions,
      ...(options.maxIterations === undefined ? {} : { maxIterations: options.maxIterations }),
    },
    options.tools ?? [],
  );
  checkBackground(options.name, options.background);
  const prompt = options.prompt ?? promptOf;
  return {
    ...(options.background === undefined ? {} : { background: options.background }),
    name: options.name,
    description: options.description,
    input_schema: options.inputSchema ?? promptInputSchema,
    handler: async (input, context) => {
      // A copy of a paused session: the parent's stored record changes only through its own updates.
      const session =
        context.resume === undefined ? initSession(options.systemPrompt, prompt(input)) : forkSession(context.resume);
      await agentLoop(options.invokeModel, options.tools ?? [], session, {
        // The parent's policy, unless the subagent has its own.
        ...(context.approvalPolicy === undefined ? {} : { approvalPolicy: context.approvalPolicy }),
        ...options.loopOptions,
        ...parentSpending(context, options.loopOptions ?? {}),
        name: options.name,
        signal: context.signal,
        ...(options.toolHandlers === undefined ? {} : { toolHandlers: options.toolHandlers }),
        ...(options.maxIterations === undefined ? {} : { maxIterations: options.maxIterations }),
        ...(options.output === undefined ? {} : { output: options.output }),
        onEvent: (event) => {
          options.loopOptions?.onEvent?.(event);
          context.update(event);
        },
      });
      if (pendingApprovals(session).length > 0) throw new ApprovalPause(session);
      if (options.output !== undefined) return structuredOutput(session) ?? null;
      return subagentAnswer(session);
    },
  };
}

/**
 * What a subagent's run takes from its parent's call, so that its spending counts against the
 * parent's budget once, live: the call's ledger (`ToolContext.budget`) as its `parentBudget` (each
 * of its model calls is charged to the parent's run, and every ledger above, as it ends, and is
 * recorded on the call's result; none starts once any of them is used up, whatever its siblings
 * spent), the parent's `prices` unless it has its own, and its own `budget`, a further limit.
 */
export function parentSpending(
  context: ToolContext,
  own: Pick<AgentLoopOptions, "budget" | "prices">,
): Pick<AgentLoopOptions, "budget" | "prices" | "parentBudget"> {
  const prices = own.prices ?? context.prices;
  return {
    ...(prices === undefined ? {} : { prices }),
    ...(own.budget === undefined ? {} : { budget: own.budget }),
    ...(context.budget === undefined ? {} : { parentBudget: context.budget }),
  };
}

/** The input a subagent takes by default: the task, as `prompt`. */
export const promptInputSchema: JsonObject = {
  type: "object",
  properties: { prompt: { type: "string", description: "The task for the subagent." } },
  required: ["prompt"],
};

/** The first user message of a subagent's run by default: `input.prompt`, else the input as JSON. */
export function promptOf(input: Record<string, unknown>): string {
  return typeof input.prompt === "string" ? input.prompt : JSON.stringify(input);
}

/**
 * What a subagent's run gives its caller: the text of its final answer, followed by the images
 * and files its tools returned during the run (in order) as rich content (`toolContent`), so the
 * parent's model sees what the answer speaks of; the text alone when there are none.
 */
export function subagentAnswer(session: Session): string | ToolContent {
  const text = response(session)?.content ?? "";
  const media: ContentPart[] = [];
  for (const message of session.messages)
    if (isToolResult(message) && message.content !== undefined)
      for (const part of message.content) if (part.type !== "text") media.push(part);
  return media.length === 0 ? text : toolContent([{ type: "text", text }, ...media]);
}
