import { createAbortRace } from "../shared/abort.ts";
import type { Session } from "../session.ts";
import { createApprovalChain } from "../tools/approval-setup.ts";
import { createExecutorSetup } from "../tools/executor-setup.ts";
import { resumeSessionTasks, type TaskResumeAction } from "../tools/task-control.ts";
import type { ToolDefinition } from "../tools/tool.ts";
import type { AgentEvent } from "./events.ts";
import { checkLoopOptions, type AgentLoopOptions } from "./loop-options.ts";
import { readGuardrails } from "./run-guardrails.ts";
import { taskOutputCheck } from "./run-tasks-setup.ts";

/**
 * What `resumeTasks` checks a rerun with: what the tasks' runs had (the run options of the same
 * names), since a rerun is a call: its input goes through the `beforeToolCall` hook, the `toolInput`
 * guardrails and the approval policy again, its outcome through `afterToolCall` and the
 * `toolOutput` guardrails. `onEvent` hears the tasks' events and the checks' (`guardrail`,
 * `tool-approval`, `hook-error`).
 */
export type ResumeTasksOptions = Pick<
  AgentLoopOptions,
  "toolHandlers" | "hooks" | "guardrails" | "approvalPolicy" | "toolTimeout" | "backgroundTasks" | "name"
> & { onEvent?: (event: AgentEvent) => void };

/**
 * Applies, without a model call, what a run applies before its first one (a server on boot): each
 * task the log says runs but no process holds is rerun (its tool's `onRestart: "rerun"`: same input
 * and id, `attempt` + 1, through the same checks as the first run: see `ResumeTasksOptions`; one
 * that would wait for a human's approval fails, a task cannot ask) or recorded `lost`; a settled
 * task not yet delivered is held for delivery at the next run's first safe point. A delivered task
 * is left alone. Returns what it did, in start order. Throws an `AgentError` naming a bad option.
 */
export function resumeTasks(
  session: Session,
  tools: readonly ToolDefinition[],
  options: ResumeTasksOptions = {},
): TaskResumeAction[] {
  checkLoopOptions(options, tools);
  const emit = options.onEvent ?? ignore;
  // The reruns outlive this call: nothing aborts their checks but each task's own cancel.
  const signal = new AbortController().signal;
  const guarded = readGuardrails(options.guardrails, options.hooks, {
    emit,
    abortRace: createAbortRace(signal),
    signal,
    agent: options.name,
    session,
    actor: undefined,
  });
  const check = taskOutputCheck(options.hooks, guarded.taskOutput);
  const { approvalPolicy, toolTimeout, name } = options;
  const setup = createExecutorSetup(tools, options.toolHandlers ?? {}, {
    session,
    ...(check.beforeToolCall === undefined ? {} : { hooks: { beforeToolCall: check.beforeToolCall } }),
    ...(approvalPolicy === undefined ? {} : { approvals: createApprovalChain(approvalPolicy, now) }),
    ...(toolTimeout === undefined ? {} : { toolTimeout }),
    ...(name === undefined ? {} : { agentName: name }),
  });
  return resumeSessionTasks(session, setup, {
    emit: options.onEvent,
    onSettled: options.backgroundTasks?.onTaskSettled,
    check,
  });
}

const ignore = (): void => undefined;
const now = (): string => new Date().toISOString();
