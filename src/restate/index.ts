export { restateAgent } from "./restate-agent.ts";
export type {
  RestateAgent,
  RestateAgentHandlers,
  RestateAgentOptions,
  RestateAgentSetup,
  RestateAgentsRun,
  RestateLoopRun,
} from "./restate-agent.ts";
export type {
  AgentRunInput,
  AgentRunResult,
  AgentStatus,
  DurableAgentOptions,
  DurableLoopOptions,
} from "./durable-run.ts";
export type { ApprovalResolution, ApprovalResolved, PendingApprovalView } from "./approvals.ts";
export type { StepRetryOptions } from "./journaled-model.ts";
export type { CancelTaskInput } from "./task-handlers.ts";
export { restateAgentClient } from "./client.ts";
export type { RestateAgentClient, RestateAgentClientOptions, RunCallOptions } from "./client.ts";
export { RestateAgentError, isRestateAgentError } from "./restate-agent-error.ts";
export { writeExportToStore } from "./session-to-store.ts";
