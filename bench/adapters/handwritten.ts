// The baseline: a hand-written loop, about as little as an agent loop can be. No validation, no
// events, no limits; tool calls of a turn run concurrently.
import { FINAL_TEXT, SYSTEM_PROMPT, USER_PROMPT, callId, type Adapter, type AddInput } from "../common.ts";

type Call = { id: string; name: string; input: AddInput };
type Msg =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string; toolCalls: Call[] }
  | { role: "tool"; id: string; content: string };
type Model = (messages: Msg[]) => Promise<{ content: string; toolCalls: Call[] }>;
type Handlers = Record<string, (input: AddInput) => unknown>;

export async function handwrittenLoop(model: Model, handlers: Handlers, messages: Msg[]): Promise<Msg[]> {
  for (let turn = 0; turn < 10_000; turn++) {
    const reply = await model(messages);
    messages.push({ role: "assistant", ...reply });
    if (reply.toolCalls.length === 0) return messages;
    const results = await Promise.all(
      reply.toolCalls.map(async (call) => {
        const handler = handlers[call.name];
        let content: string;
        try {
          content = handler === undefined ? `Error: unknown tool ${call.name}` : String(await handler(call.input));
        } catch (error) {
          content = `Error: ${String(error)}`;
        }
        return { role: "tool" as const, id: call.id, content };
      }),
    );
    messages.push(...results);
  }
  throw new Error("too many turns");
}

export const handwritten: Adapter = {
  name: "hand-written loop",
  packageName: "",
  validation: "none",
  modelHook: "async function(messages) returning { content, toolCalls }",
  async run(w) {
    const model: Model = async (messages) => {
      const n = w.nextCall();
      const last = messages[messages.length - 1];
      w.checkLastResult(n, last?.role === "tool" ? last.id : undefined);
      if (w.wantsTools(n)) {
        const toolCalls: Call[] = [];
        for (let k = 0; k < w.callsPerTurn; k++)
          toolCalls.push({ id: callId(n, k), name: "add", input: w.input(n, k) });
        return { content: "", toolCalls };
      }
      w.checkHistory(n, messages.length);
      return { content: FINAL_TEXT, toolCalls: [] };
    };
    const messages: Msg[] = [
      { role: "system", content: SYSTEM_PROMPT },
      { role: "user", content: USER_PROMPT },
    ];
    await handwrittenLoop(model, { add: w.tool }, messages);
    const last = messages[messages.length - 1];
    return { text: last?.role === "assistant" ? last.content : "", keep: messages };
  },
};
