// A blocked streamed answer through the UI message stream, read by the AI SDK's own Chat (ai 7):
// the text already sent ends where it stood and a `data-text-retract` part names it; the marker
// follows as a text part of its own; the stream finishes with `content-filter`.
import { expect, it } from "vitest";
import { agentStream, initSession, type Guardrail } from "simple-agent-loop";
import { uiMessageStreamResponse } from "simple-agent-loop/http";
import { scriptedModel } from "simple-agent-loop/testing";
import * as ai from "ai-v7";
import { Chat } from "ai-sdk-react-v4";

type UiPart = { type: string; [field: string]: unknown };
type ChatInstance = {
  messages: { role: string; parts: UiPart[] }[];
  status: string;
  error: Error | undefined;
  sendMessage: (message?: { text: string }) => Promise<void>;
};

it("a retracted answer reaches useChat as a data-text-retract part naming the text, then the marker", async () => {
  const leaks: Guardrail = {
    name: "leaks",
    check: ({ text }) =>
      text?.includes("secret") === true ? { action: "block", message: "a secret" } : { action: "allow" },
  };
  const model = scriptedModel([{ role: "assistant", content: "the secret is 42" }], { stream: true });
  const transport = new ai.DefaultChatTransport({
    api: "http://localhost/api/chat",
    fetch: () =>
      Promise.resolve(
        uiMessageStreamResponse(agentStream(model, [], initSession("s", "hi"), { guardrails: { output: [leaks] } })),
      ),
  });
  const chat = new (Chat as unknown as new (init: { transport: unknown }) => ChatInstance)({ transport });
  await chat.sendMessage({ text: "hi" });
  expect(chat.error).toBeUndefined();
  const parts = JSON.parse(JSON.stringify(chat.messages[1]?.parts ?? [])) as UiPart[];
  const texts = parts.filter((part) => part.type === "text").map((part) => part.text);
  expect(texts).toStrictEqual(["the secret is 42", "[blocked by leaks]"]);
  const retract = parts.find((part) => part.type === "data-text-retract");
  expect(retract?.data).toMatchObject({ text: "the secret is 42" });
});
