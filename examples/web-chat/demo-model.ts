// The offline demo model of the web chat: no network, no key. It lists the notes, asks to write
// one (a tool that needs the user's approval), then answers, streaming word by word, so the page's
// streaming, tool cards, approval buttons and reloads all work without a live model.
import type { InvokeModel, Message, ModelStreamEvent, Session } from "simple-agent-loop";

export function demoModel(wordDelayMs = 60): InvokeModel {
  return (_tools, session, { signal }) => demoTurn(session, signal, wordDelayMs);
}

async function* demoTurn(session: Session, signal: AbortSignal, wordDelayMs: number): AsyncGenerator<ModelStreamEvent> {
  const { task, listed, written } = progress(session.messages);
  const id = `demo_${session.messages.length}`;
  let text: string;
  let call: { type: "tool_call"; id: string; name: string; input: { [key: string]: string } } | undefined;
  if (listed === undefined) {
    text = "I am the offline demo model. Let me look at the notes first.";
    call = { type: "tool_call", id, name: "list_notes", input: {} };
  } else if (written === undefined) {
    text = "Now I will save your task as a note. Writing needs your approval: press Approve or Deny.";
    call = { type: "tool_call", id, name: "write_note", input: { title: "Task", text: task.slice(0, 200) } };
  } else if (written.isError === true) {
    text = "Understood, I did not write the note. Set ANTHROPIC_API_KEY or OPENAI_API_KEY for a live model.";
  } else {
    text = "Done: the note is saved. Set ANTHROPIC_API_KEY or OPENAI_API_KEY for a live model.";
  }
  for (const word of text.split(/(?<= )/)) {
    await sleep(wordDelayMs, signal);
    yield { type: "text-delta", delta: word };
  }
  yield { type: "message", message: { role: "assistant", content: text } };
  if (call !== undefined) yield { type: "message", message: call };
  yield { type: "response-end", stopReason: call === undefined ? "end_turn" : "tool_use" };
}

function progress(messages: readonly Message[]) {
  const user = messages.findLast((message) => "role" in message && message.role === "user");
  const task = user !== undefined && "content" in user && typeof user.content === "string" ? user.content : "";
  const names = new Map<string, string>();
  let listed: Message | undefined;
  let written: { isError?: boolean } | undefined;
  for (const message of messages) {
    if (!("type" in message)) continue;
    if (message.type === "tool_call") names.set(message.id, message.name);
    if (message.type === "tool_result" && names.get(message.id) === "list_notes") listed = message;
    if (message.type === "tool_result" && names.get(message.id) === "write_note") written = message;
  }
  return { task, listed, written };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason as Error)), { once: true });
  });
}
