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
  keepOutput,
  keptOutput,
  hasKeptOutputs,
  setSessionId,
  sessionIdOf,
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
  BudgetOverrun,
  StopDetails,
  JsonValue,
  JsonObject,
  SessionListener,
  SessionChange,
  SessionChangeListener,
  KeptOutput,
  SubagentUsage,
  TaskRecord,
  TaskStatus,
  DecidedBy,
  ClassifierDecision,
  ConsultedLink,
  ProgramCall,
} from "./session.ts";
export { imagePart, filePart, contentText } from "./content-parts.ts";
export type { ContentPart, TextPart, ImagePart, FilePart } from "./content-parts.ts";
export { toolContent, isToolContent } from "./tools/tool-content.ts";
export type { ToolContent } from "./tools/tool-content.ts";
export { agentLoop, agentStream } from "./loop/loop.ts";
export { defaultMaxIterations } from "./loop/loop-options.ts";
export { clampDelay, maxTimerDelay } from "./numeric-options.ts";
export { jsonSchema } from "./tools/json-schema.ts";
export type { JsonSchema } from "./tools/json-schema.ts";
export { resolveApproval, pendingApprovals, pendingApprovalEntries } from "./tools/approval.ts";
export { subagentTool } from "./agents/agent-tool.ts";
export { codeModeName } from "./tools/code-mode/code-mode-option.ts";
export type { CodeModeOption } from "./tools/code-mode/code-mode-option.ts";
export { codeModeDeclarations } from "./tools/code-mode/declarations.ts";
export type { AgentToolOptions } from "./agents/agent-tool.ts";
export type { SubagentToolOptions } from "./loop/subagent.ts";
export type { ApprovalDecision, PendingApprovalEntry } from "./tools/approval.ts";
export { matchPolicy } from "./tools/match-policy.ts";
export type { PolicyMatch } from "./tools/match-policy.ts";
export { checkApprovalPolicy } from "./tools/approval-policy.ts";
export { llmJudge, defaultJudgeInstructions } from "./tools/llm-judge.ts";
export type { LlmJudgeOptions } from "./tools/llm-judge.ts";
export type {
  ApprovalPolicy,
  ApprovalRule,
  InputMatch,
  ApprovalClassifier,
  ClassifierVerdict,
  AskHuman,
  ApprovalRequest,
} from "./tools/approval-policy.ts";
export type { AgentHooks } from "./loop/hooks.ts";
export { sessionMetrics, createMetricsCollector } from "./loop/metrics.ts";
export type { SessionMetricsOptions, SessionMetrics } from "./loop/metrics.ts";
export { sessionOutcome, restingOutcome } from "./session-turns.ts";
export type { SessionOutcome } from "./session-turns.ts";
export { structuredOutput } from "./loop/structured-output.ts";
export type { OutputSchema } from "./loop/structured-output.ts";
export type { RunMetrics } from "./loop/run-metrics.ts";
export type { AgentStream } from "./loop/loop.ts";
export type { AgentLoopOptions } from "./loop/loop-options.ts";
export type { InvokeModel, ModelContext, StructuredOutputModel } from "./model/invoke-model.ts";
export type { ModelSettings } from "./model/model-settings.ts";
export { withFallback } from "./model/with-fallback.ts";
export { costOf, priceOf } from "./model/cost.ts";
export type { ModelPrice } from "./model/cost.ts";
export { createBudgetLedger } from "./model/budget.ts";
export type { BudgetCharge, BudgetLedger, BudgetLedgerOptions, BudgetLimit } from "./model/budget.ts";
export { hasToolCall, stepCountIs, repeatedToolCalls } from "./loop/stop-conditions.ts";
export type { StopCondition, StopConditionState } from "./loop/stop-conditions.ts";
export type { FallbackOptions } from "./model/with-fallback.ts";
export type { AgentEvent, RunOutcome } from "./loop/events.ts";
export type { ModelStreamEvent } from "./model/model-stream-event.ts";
export { executeToolCalls } from "./tools/execute-tool-calls.ts";
export type { ExecuteToolCallsOptions } from "./tools/execute-tool-calls.ts";
export { ApprovalPause } from "./tools/approval-pause.ts";
export type { ToolOutcome, PendingApproval } from "./tools/tool-outcome.ts";
export { tool, toolSchemas } from "./tools/tool.ts";
export type {
  Tool,
  ToolSchema,
  ToolDefinition,
  ToolHandler,
  ToolHandlers,
  ToolContext,
  ToolOptions,
  ValidationResult,
} from "./tools/tool.ts";
export type { StandardSchemaV1 } from "./tools/standard-schema.ts";
export type { BackgroundOption } from "./tools/background.ts";
export { backgroundTasks, waitForTask, cancelTask } from "./tools/task-control.ts";
export { resumeTasks } from "./loop/resume-tasks.ts";
export type { ResumeTasksOptions } from "./loop/resume-tasks.ts";
export type { WaitForTaskOptions, TaskResumeAction } from "./tools/task-control.ts";
export type { BackgroundTask, TaskEvent } from "./tools/task-registry.ts";
export { taskTools } from "./tools/task-tools.ts";
export type { BackgroundTasksOptions } from "./loop/run-tasks-setup.ts";
export type { ElicitationAnswer, ElicitationRequest } from "./tools/elicitation.ts";
export { compactSession, createCompactor } from "./loop/compaction.ts";
export { slidingWindow, summarizeOlderTurns, estimateTokens } from "./loop/context-strategies.ts";
export type { CompactionStrategy, CompactionContext, CompactionFallback } from "./loop/compaction-strategy.ts";
export type { SummarizeOptions } from "./loop/context-strategies.ts";
export { clearToolResults } from "./loop/clear-tool-results.ts";
export type { ClearToolResultsOptions } from "./loop/clear-tool-results.ts";
export { defaultLargeOutputChars } from "./loop/large-output.ts";
export type { LargeOutputOption } from "./loop/large-output.ts";
export { recallOutputName } from "./tools/recall-output.ts";
export type { RecallOutputInput } from "./tools/recall-output.ts";
export { searchToolsName, loadedTools } from "./tools/search-tools.ts";
export type { SearchToolsOutput } from "./tools/search-tools.ts";
export { contextUsage } from "./loop/context-usage.ts";
export type { ContextUsage, ContextUsageOptions, ContextPart } from "./loop/context-usage.ts";
export type { CompactSessionOptions } from "./loop/compaction.ts";
export {
  AgentError,
  MaxIterationsError,
  InvalidModelResponseError,
  StructuredOutputError,
  AbortError,
  isAgentError,
  isMaxIterationsError,
  isInvalidModelResponseError,
  isStructuredOutputError,
  isAbortError,
  ProviderError,
  ContextOverflowError,
  isProviderError,
  isContextOverflowError,
  isRetryable,
  TimeoutError,
  isTimeoutError,
  BudgetExceededError,
  isBudgetExceededError,
  GuardrailTrippedError,
  isGuardrailTrippedError,
  describeError,
  maxErrorLength,
  markRaisedBeforeSending,
  isRaisedBeforeSending,
} from "./errors.ts";
export { retryDelay } from "./loop/retry.ts";
export type { RetryOptions } from "./loop/retry.ts";
export { formatLogLine } from "./logger.ts";
export type { LoggerOption, LogLine } from "./logger.ts";
export { defineAgent } from "./agents/define-agent.ts";
export type { AgentDefinition, AgentSpec } from "./agents/define-agent.ts";
export { handoff } from "./agents/handoff.ts";
export type { Handoff, HandoffHistory, HandoffOptions } from "./agents/handoff.ts";
export { runAgent, streamAgent, HandoffLimitError } from "./agents/run-agent.ts";
export type { AgentRunEvent, RunAgentOptions } from "./agents/run-agent.ts";
export type {
  Guardrail,
  GuardrailEvent,
  GuardrailInput,
  GuardrailKind,
  GuardrailVerdict,
  Guardrails,
} from "./guardrails/guardrail.ts";
export { blockedMarker } from "./guardrails/guarded-messages.ts";
