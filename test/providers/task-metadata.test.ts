import { describe, expect, it } from "vitest";
import type { Session } from "simple-agent-loop";
import { toAnthropicRequest } from "simple-agent-loop/anthropic";
import { toBedrockRequest } from "simple-agent-loop/bedrock";
import { toGeminiRequest } from "simple-agent-loop/google";
import { toOpenAIChatRequest, toOpenAIResponsesRequest } from "simple-agent-loop/openai";

// A session with every background-task field: the running result's record, a delivery message
// and a wait_task result that delivered. None of it is the model's business but the texts.
const session: Session = {
  messages: [
    { role: "system", content: "sys" },
    { role: "user", content: "build" },
    { type: "tool_call", id: "c1", name: "build", input: { path: "." } },
    {
      type: "tool_result",
      id: "c1",
      output: { task: "task_marker", status: "running", note: "runs" },
      task: {
        id: "task_marker",
        status: "completed",
        onRestart: "rerun",
        attempt: 2,
        startedAt: "2026-01-01T00:00:00.000Z",
        settledAt: "2026-01-01T00:00:01.000Z",
        output: "SECRET_RECORD_OUTPUT",
        reason: "SECRET_REASON",
      },
    },
    { role: "assistant", content: "waiting" },
    { role: "user", content: "[background task done]\nok", deliversTask: "task_marker" },
    { type: "tool_call", id: "c2", name: "wait_task", input: { id: "task_other" } },
    { type: "tool_result", id: "c2", output: "outcome", deliversTask: "task_other" },
    { role: "assistant", content: "fine" },
  ],
};

const converters: [string, () => unknown][] = [
  ["anthropic", () => toAnthropicRequest(session, [], { model: "m", maxTokens: 10 })],
  ["openai chat", () => toOpenAIChatRequest(session, [], { model: "m" })],
  ["openai responses", () => toOpenAIResponsesRequest(session, [], { model: "m" })],
  ["google", () => toGeminiRequest(session, [], { model: "m" })],
  ["bedrock", () => toBedrockRequest(session, [])],
];

describe("background task metadata is never sent to a provider", () => {
  it.each(converters)(
    "%s: the record, deliversTask and the record's output stay out of the request",
    (_name, convert) => {
      const body = JSON.stringify(convert());
      expect(body).not.toContain("SECRET_RECORD_OUTPUT");
      expect(body).not.toContain("SECRET_REASON");
      expect(body).not.toContain("deliversTask");
      expect(body).not.toContain("onRestart");
      // The running note the model was given is sent, as any output.
      expect(body).toContain("[background task done]");
    },
  );
});
