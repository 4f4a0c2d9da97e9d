// Strands Agents (@strands-agents/sdk): a Model subclass whose stream() yields the events of a
// complete response. NullConversationManager keeps the whole history (the default sliding window
// of 40 messages would drop history, so the library would carry a shorter session than the others).
import { Agent, Model, NullConversationManager, tool, type BaseModelConfig, type Message } from "@strands-agents/sdk";
import {
  ADD_INPUT_JSON,
  ADD_TOOL,
  ADD_ZOD,
  FINAL_TEXT,
  SYSTEM_PROMPT,
  USER_PROMPT,
  callId,
  type Adapter,
  type Workload,
} from "../common.ts";

type StreamEvent = ReturnType<Model["stream"]> extends AsyncIterable<infer E> ? E : never;

function lastResultId(messages: Message[]): string | undefined {
  const last = messages[messages.length - 1];
  if (last === undefined || last.role !== "user") return undefined;
  const block = last.content[last.content.length - 1];
  return block?.type === "toolResultBlock" ? block.toolUseId : undefined;
}

class ScriptedModel extends Model<BaseModelConfig> {
  private config: BaseModelConfig = { modelId: "scripted" };
  private readonly w: Workload;
  constructor(w: Workload) {
    super();
    this.w = w;
  }
  updateConfig(config: BaseModelConfig): void {
    this.config = { ...this.config, ...config };
  }
  getConfig(): BaseModelConfig {
    return this.config;
  }
  async *stream(messages: Message[]): AsyncGenerator<StreamEvent> {
    const w = this.w;
    const n = w.nextCall();
    w.checkLastResult(n, lastResultId(messages));
    yield { type: "modelMessageStartEvent", role: "assistant" };
    if (w.wantsTools(n)) {
      for (let k = 0; k < w.callsPerTurn; k++) {
        yield {
          type: "modelContentBlockStartEvent",
          start: { type: "toolUseStart", name: "add", toolUseId: callId(n, k) },
        };
        yield { type: "modelContentBlockDeltaEvent", delta: { type: "toolUseInputDelta", input: ADD_INPUT_JSON } };
        yield { type: "modelContentBlockStopEvent" };
      }
      yield { type: "modelMessageStopEvent", stopReason: "toolUse" };
    } else {
      w.checkHistory(n, messages.length);
      yield { type: "modelContentBlockStartEvent" };
      yield { type: "modelContentBlockDeltaEvent", delta: { type: "textDelta", text: FINAL_TEXT } };
      yield { type: "modelContentBlockStopEvent" };
      yield { type: "modelMessageStopEvent", stopReason: "endTurn" };
    }
  }
}

export const strands: Adapter = {
  name: "@strands-agents/sdk",
  packageName: "@strands-agents/sdk",
  validation: "zod (same schema; a JSON Schema inputSchema is passed through unchecked)",
  modelHook: "Model subclass whose async-generator stream() yields the response events",
  async run(w) {
    const agent = new Agent({
      model: new ScriptedModel(w),
      systemPrompt: SYSTEM_PROMPT,
      tools: [
        tool({
          name: "add",
          description: ADD_TOOL.description,
          inputSchema: ADD_ZOD,
          callback: (input) => w.tool(input),
        }),
      ],
      printer: false,
      conversationManager: new NullConversationManager(),
    });
    const result = await agent.invoke(USER_PROMPT);
    return { text: String(result), keep: agent };
  },
};
