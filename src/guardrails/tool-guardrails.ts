import { notifySessionChange, type GuardrailMark, type JsonObject, type ToolResultMessage } from "../session.ts";
import type { ToolHooks } from "../tools/tool-hooks.ts";
import { askGuardrails, type GuardrailReport } from "./ask-guardrails.ts";
import type { Guardrail } from "./guardrail.ts";
import { guardedResult } from "./guarded-messages.ts";

/** The tool hooks with the `toolInput` and `toolOutput` guardrails around them, and how to mark the results they changed. */
export type ToolGuardrails = {
  hooks: ToolHooks;
  /** The result as it enters the session: carries the guardrail's mark when one blocked or redacted it. */
  marked: (result: ToolResultMessage) => ToolResultMessage;
};

/**
 * `toolInput` guardrails run before the `beforeToolCall` hook: a block (or a retry: its feedback)
 * answers the call with an error result carrying the guardrail's message, and the tool never runs;
 * a redact whose replacement is a JSON object becomes the call's input (recorded as an `update`)
 * before it runs (any other replacement blocks). `toolOutput` guardrails run after the
 * `afterToolCall` hook: a block replaces the result with such an error, a redact with its
 * replacement. Either way the result carries the verdict as its `guardrail` field.
 */
export function toolGuardrails(
  hooks: ToolHooks | undefined,
  guardrails: { toolInput: readonly Guardrail[]; toolOutput: readonly Guardrail[] },
  report: GuardrailReport,
): ToolGuardrails {
  // The verdicts that changed a call's result, by call id, until the result enters the session.
  const marks = new Map<string, Required<GuardrailMark>["guardrail"]>();
  const { toolInput, toolOutput } = guardrails;
  const guarded: ToolHooks = { ...hooks };
  if (toolInput.length > 0) {
    const userHook = hooks?.beforeToolCall;
    guarded.beforeToolCall = async (input) => {
      const { call, session } = input;
      const decision = await askGuardrails(
        toolInput,
        { kind: "toolInput", text: JSON.stringify(call.input), toolCall: call, session, ...agentOf(report) },
        report,
        { callId: call.id },
      );
      if (decision.action === "block" || decision.action === "retry") {
        const mark =
          decision.action === "block"
            ? ({ name: decision.name, action: "block", message: decision.message } as const)
            : ({ name: decision.name, action: "retry", feedback: decision.feedback } as const);
        marks.set(call.id, mark);
        return { deny: mark.action === "block" ? mark.message : mark.feedback };
      }
      if (decision.redacted !== undefined) {
        const replaced = parseObject(decision.redacted.replacement);
        if (replaced === undefined) {
          const mark = { name: decision.redacted.name, action: "block", message: "its input was redacted" } as const;
          marks.set(call.id, mark);
          return { deny: mark.message };
        }
        call.input = replaced;
        const index = session.messages.lastIndexOf(call);
        if (index !== -1) notifySessionChange(session, { type: "update", index, message: call, reason: "guardrail" });
      }
      return userHook?.(input);
    };
  }
  if (toolOutput.length > 0) {
    const userHook = hooks?.afterToolCall;
    guarded.afterToolCall = async (input) => {
      const replaced = userHook === undefined ? undefined : await userHook(input);
      const { call, session, result } = input;
      // What the user's hook replaced is what the guardrails see; `marked` turns it into the result.
      const text = replaced === undefined ? outputText(result) : outputText({ ...result, output: toJson(replaced) });
      const decision = await askGuardrails(
        toolOutput,
        { kind: "toolOutput", text, toolCall: call, result, session, ...agentOf(report) },
        report,
        { callId: call.id },
      );
      if (decision.action === "block")
        marks.set(call.id, { name: decision.name, action: "block", message: decision.message });
      else if (decision.action === "retry")
        marks.set(call.id, { name: decision.name, action: "retry", feedback: decision.feedback });
      else if (decision.redacted !== undefined)
        marks.set(call.id, {
          name: decision.redacted.name,
          action: "redact",
          replacement: decision.redacted.replacement,
        });
      return replaced;
    };
  }
  return {
    hooks: guarded,
    marked: (result) => {
      const mark = marks.get(result.id);
      if (mark === undefined) return result;
      marks.delete(result.id);
      return guardedResult(result.id, mark);
    },
  };
}

function agentOf(report: GuardrailReport): { agent?: string } {
  return report.agent === undefined ? {} : { agent: report.agent };
}

function parseObject(text: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}

function outputText(result: ToolResultMessage): string {
  return typeof result.output === "string" ? result.output : JSON.stringify(result.output);
}

function toJson(value: unknown): ToolResultMessage["output"] {
  if (typeof value === "object" && value !== null && "output" in value)
    return (value as { output: ToolResultMessage["output"] }).output;
  return value as ToolResultMessage["output"];
}
