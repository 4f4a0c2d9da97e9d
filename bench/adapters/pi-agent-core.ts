// pi-agent-core (@mariozechner/pi-agent-core): the Agent class with a custom `streamFn` that
// answers each model call with a one-event stream ("done" with the whole assistant message).
import { Agent, type AgentMessage, type AgentTool, type StreamFn } from "@mariozechner/pi-agent-core";
import { createAssistantMessageEventStream, type AssistantMessage, type Model } from "@mariozechner/pi-ai";
import {
  ADD_TOOL,
  FINAL_TEXT,
  SYSTEM_PROMPT,
  USER_PROMPT,
  callId,
  type Adapter,
  type AddInput,
  type Workload,
} from "../common.ts";

const model: Model<"bench-scripted"> = {
  id: "scripted",
  name: "scripted",
  api: "bench-scripted",
  provider: "bench",
  baseUrl: "",
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000,
  maxTokens: 100_000,
};

const usage = (): AssistantMessage["usage"] => ({
  input: 1,
  output: 1,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 2,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});

function scriptedStream(w: Workload): StreamFn {
  return (streamModel, context) => {
    const n = w.nextCall();
    const last = context.messages[context.messages.length - 1];
    w.checkLastResult(n, last?.role === "toolResult" ? last.toolCallId : undefined);
    const base = {
      role: "assistant" as const,
      api: streamModel.api,
      provider: streamModel.provider,
      model: streamModel.id,
      usage: usage(),
      timestamp: Date.now(),
    };
    let message: AssistantMessage;
    if (w.wantsTools(n)) {
      const content: AssistantMessage["content"] = [];
      for (let k = 0; k < w.callsPerTurn; k++)
        content.push({ type: "toolCall", id: callId(n, k), name: "add", arguments: w.input(n, k) });
      message = { ...base, content, stopReason: "toolUse" };
    } else {
      w.checkHistory(n, context.messages.length);
      message = { ...base, content: [{ type: "text", text: FINAL_TEXT }], stopReason: "stop" };
    }
    const stream = createAssistantMessageEventStream();
    stream.push({ type: "done", reason: message.stopReason === "toolUse" ? "toolUse" : "stop", message });
    stream.end(message);
    return stream;
  };
}

function textOf(message: AgentMessage | undefined): string {
  if (message === undefined || !("role" in message) || message.role !== "assistant") return "";
  return message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

export const piAgentCore: Adapter = {
  name: "@mariozechner/pi-agent-core",
  packageName: "@mariozechner/pi-agent-core",
  validation: "JSON Schema (typebox compiler, in pi-ai validateToolArguments)",
  modelHook: "custom streamFn returning an AssistantMessageEventStream with one `done` event",
  async run(w) {
    const addTool: AgentTool = {
      name: "add",
      label: "add",
      description: ADD_TOOL.description,
      // A plain JSON Schema object; pi-ai compiles it with typebox to validate the arguments.
      parameters: ADD_TOOL.input_schema as unknown as AgentTool["parameters"],
      execute: async (_id, params) => {
        const sum = await w.tool(params as AddInput);
        return { content: [{ type: "text", text: String(sum) }], details: undefined };
      },
    };
    const agent = new Agent({
      initialState: { systemPrompt: SYSTEM_PROMPT, model, tools: [addTool] },
      streamFn: scriptedStream(w),
    });
    await agent.prompt(USER_PROMPT);
    const messages = agent.state.messages;
    const error = agent.state.errorMessage;
    if (error !== undefined) throw new Error(`pi-agent-core: ${error}`);
    return { text: textOf(messages[messages.length - 1]), keep: agent };
  },
};
