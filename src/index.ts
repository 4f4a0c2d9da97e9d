export {
  initSession,
  extendSession,
  send,
  forkSession,
  response,
  now,
  onSessionExtend,
  onSessionChange,
  notifySessionChange,
  spliceSession,
  isToolCall,
  isToolResult,
  isModelMessage,
} from "./session.ts";
export type {
  Session,
  Message,
  ModelMessage,
  SystemMessage,
  UserMessage,
  AssistantMessage,
  ThinkingMessage,
  ToolCallMessage,
  ToolResultMessage,
  StopReason,
  Usage,
  TurnEndFields,
  StopDetails,
  JsonValue,
  JsonObject,
  SessionListener,
  SessionChange,
  SessionChangeListener,
} from "./session.ts";
export { agentLoop, agentStream } from "./loop.ts";
export { defaultMaxIterations } from "./loop-options.ts";
export { clampDelay, maxTimerDelay } from "./numeric-options.ts";
export { jsonSchema } from "./json-schema.ts";
export type { JsonSchema } from "./json-schema.ts";
export { resolveApproval, pendingApprovals, pendingApprovalEntries } from "./approval.ts";
export { subagentTool } from "./subagent.ts";
export type { SubagentToolOptions } from "./subagent.ts";
export type { ApprovalDecision, PendingApprovalEntry } from "./approval.ts";
export type { AgentHooks } from "./hooks.ts";
export { sessionMetrics, createMetricsCollector } from "./metrics.ts";
export { structuredOutput, StructuredOutputError, isStructuredOutputError } from "./structured-output.ts";
export type { OutputSchema } from "./structured-output.ts";
export type { RunMetrics } from "./run-metrics.ts";
export type { AgentStream } from "./loop.ts";
export type { AgentLoopOptions } from "./loop-options.ts";
export type { InvokeModel, ModelContext, StructuredOutputModel } from "./invoke-model.ts";
export type { AgentEvent, ModelStreamEvent, RunOutcome } from "./events.ts";
export { executeToolCalls, ApprovalPause } from "./execute-tool-calls.ts";
export type { ExecuteToolCallsOptions, ToolOutcome, PendingApproval } from "./execute-tool-calls.ts";
export { tool, toolSchemas } from "./tools.ts";
export type {
  Tool,
  ToolSchema,
  ToolDefinition,
  ToolHandler,
  ToolHandlers,
  ToolContext,
  ToolOptions,
  ValidationResult,
} from "./tools.ts";
export type { StandardSchemaV1 } from "./standard-schema.ts";
export { compactSession, createCompactor } from "./compaction.ts";
export { slidingWindow, summarizeOlderTurns, estimateTokens } from "./context-strategies.ts";
export type { CompactionStrategy, CompactionContext, CompactionFallback } from "./compaction-strategy.ts";
export type { SummarizeOptions } from "./context-strategies.ts";
export type { CompactSessionOptions } from "./compaction.ts";
export {
  AgentError,
  MaxIterationsError,
  InvalidModelResponseError,
  AbortError,
  isAgentError,
  isMaxIterationsError,
  isInvalidModelResponseError,
  isAbortError,
  ProviderError,
  ContextOverflowError,
  isProviderError,
  isContextOverflowError,
  isRetryable,
  describeError,
  maxErrorLength,
} from "./errors.ts";
export { retryDelay } from "./retry.ts";
export type { RetryOptions } from "./retry.ts";
export { formatLogLine } from "./logger.ts";
export type { LoggerOption, LogLine } from "./logger.ts";
