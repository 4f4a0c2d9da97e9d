// The UI message stream checked against the AI SDK's own client code, for each supported major:
// its Chat (what useChat runs) posts messages through its DefaultChatTransport, our handler answers
// with uiMessageStreamResponse, and the Chat builds its UI messages from what it read.
import { describe, expect, it } from "vitest";
import { agentStream, tool, type Session } from "simple-agent-loop";
import { fromUIMessages, uiMessageStreamResponse } from "simple-agent-loop/http";
import { scriptedModel, type ScriptedModel } from "simple-agent-loop/testing";
import * as aiV6 from "ai-v6";
import * as aiV7 from "ai-v7";
import { Chat as ChatV3 } from "ai-sdk-react-v3";
import { Chat as ChatV4 } from "ai-sdk-react-v4";

const majors = [
  { name: "ai 6 with @ai-sdk/react 3", ai: aiV6 as unknown as AiModule, Chat: ChatV3 as unknown as ChatClass },
  { name: "ai 7 with @ai-sdk/react 4", ai: aiV7 as unknown as AiModule, Chat: ChatV4 as unknown as ChatClass },
];

// The little of each package's API the test uses, typed once for both majors.
type UiPart = { type: string; [field: string]: unknown };
type UiMessage = { id: string; role: string; parts: UiPart[] };
type ChatInstance = {
  messages: UiMessage[];
  status: string;
  error: Error | undefined;
  sendMessage: (message?: { text: string }) => Promise<void>;
  addToolApprovalResponse: (response: { id: string; approved: boolean; reason?: string }) => Promise<void>;
};
type ChatClass = new (init: { transport: unknown }) => ChatInstance;
type AiModule = {
  DefaultChatTransport: new (init: {
    api: string;
    fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  }) => unknown;
};

const add = tool({
  name: "add",
  description: "adds two numbers",
  inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
  handler: ({ a, b }) => Number(a) + Number(b),
});

const deleteFile = tool({
  name: "delete_file",
  description: "deletes a file",
  inputSchema: { type: "object", properties: { path: { type: "string" } } },
  requireApproval: true,
  handler: ({ path }) => `deleted ${String(path)}`,
});

/** The server side of a chat: the posted UI messages as a session, the run as a UI message stream. */
function chatServer(model: ScriptedModel, seen: Session[]) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const { messages } = (await request.json()) as { messages: unknown };
    const session = fromUIMessages(messages);
    session.messages.unshift({ role: "system", content: "You help." });
    seen.push(structuredClone(session));
    return uiMessageStreamResponse(agentStream(model, [add, deleteFile], session), { signal: request.signal });
  };
}

// The parts as JSON would carry them (fields set to undefined left out), without provider metadata.
function partsOf(message: UiMessage | undefined): UiPart[] {
  return (JSON.parse(JSON.stringify(message?.parts ?? [])) as UiPart[]).map((part) => {
    const { providerMetadata: _metadata, callProviderMetadata: _call, ...rest } = part;
    return rest;
  });
}

for (const { name, ai, Chat } of majors) {
  describe(`uiMessageStreamResponse read by ${name}`, () => {
    it("streams text in pieces, a tool call with its input and output, and the answer of the next step", async () => {
      const model = scriptedModel(
        [
          [
            { role: "assistant", content: "Let me add them." },
            { type: "tool_call", id: "c1", name: "add", input: { a: 1, b: 2 } },
          ],
          [{ role: "assistant", content: "It is 3." }],
        ],
        { stream: true },
      );
      const seen: Session[] = [];
      const chat = new Chat({
        transport: new ai.DefaultChatTransport({ api: "http://localhost/api/chat", fetch: chatServer(model, seen) }),
      });
      await chat.sendMessage({ text: "What is 1 + 2?" });
      expect(chat.error).toBeUndefined();
      expect(chat.status).toBe("ready");
      expect(chat.messages.map((message) => message.role)).toStrictEqual(["user", "assistant"]);
      expect(partsOf(chat.messages[1])).toStrictEqual([
        { type: "step-start" },
        { type: "text", text: "Let me add them.", state: "done" },
        { type: "tool-add", toolCallId: "c1", state: "output-available", input: { a: 1, b: 2 }, output: 3 },
        { type: "step-start" },
        { type: "text", text: "It is 3.", state: "done" },
      ]);
      expect(seen[0]!.messages).toStrictEqual([
        { role: "system", content: "You help." },
        { role: "user", content: "What is 1 + 2?" },
      ]);
    });

    it("round-trips the history: the next request's session holds the calls and results the page shows", async () => {
      const model = scriptedModel([
        [{ type: "tool_call", id: "c1", name: "add", input: { a: 1, b: 2 } }],
        [{ role: "assistant", content: "3" }],
        [{ role: "assistant", content: "You are welcome." }],
      ]);
      const seen: Session[] = [];
      const chat = new Chat({
        transport: new ai.DefaultChatTransport({ api: "http://localhost/api/chat", fetch: chatServer(model, seen) }),
      });
      await chat.sendMessage({ text: "1 + 2?" });
      await chat.sendMessage({ text: "Thanks" });
      expect(chat.error).toBeUndefined();
      expect(seen[1]!.messages).toStrictEqual([
        { role: "system", content: "You help." },
        { role: "user", content: "1 + 2?" },
        { type: "tool_call", id: "c1", name: "add", input: { a: 1, b: 2 } },
        { type: "tool_result", id: "c1", output: 3 },
        { role: "assistant", content: "3" },
        { role: "user", content: "Thanks" },
      ]);
    });

    it("a call that needs approval (asked for while the model still streams): the page shows the request, the approval goes back, the call runs", async () => {
      const model = scriptedModel(
        [
          [
            { role: "assistant", content: "Deleting." },
            { type: "tool_call", id: "d1", name: "delete_file", input: { path: "a.txt" } },
          ],
          [{ role: "assistant", content: "Deleted." }],
        ],
        { stream: true },
      );
      const seen: Session[] = [];
      const chat = new Chat({
        transport: new ai.DefaultChatTransport({ api: "http://localhost/api/chat", fetch: chatServer(model, seen) }),
      });
      await chat.sendMessage({ text: "Delete a.txt" });
      expect(chat.error).toBeUndefined();
      const waiting = partsOf(chat.messages[1]).find((part) => part.type === "tool-delete_file");
      expect(waiting).toMatchObject({ state: "approval-requested", toolCallId: "d1", approval: { id: "d1" } });
      await chat.addToolApprovalResponse({ id: "d1", approved: true });
      await chat.sendMessage();
      expect(chat.error).toBeUndefined();
      expect(seen[1]!.messages.at(-1)).toMatchObject({
        type: "tool_call",
        id: "d1",
        approval: { status: "approved", input: { path: "a.txt" } },
      });
      const parts = partsOf(chat.messages.at(-1));
      expect(parts.find((part) => part.type === "tool-delete_file")).toMatchObject({
        state: "output-available",
        output: "deleted a.txt",
      });
      expect(parts.at(-1)).toMatchObject({ type: "text", text: "Deleted." });
    });

    it("a call the page denies shows as denied (tool-output-denied), not as a failed tool, and never runs", async () => {
      const model = scriptedModel(
        [
          [{ type: "tool_call", id: "d2", name: "delete_file", input: { path: "b.txt" } }],
          [{ role: "assistant", content: "Left it." }],
        ],
        { stream: true },
      );
      const seen: Session[] = [];
      const chat = new Chat({
        transport: new ai.DefaultChatTransport({ api: "http://localhost/api/chat", fetch: chatServer(model, seen) }),
      });
      await chat.sendMessage({ text: "Delete b.txt" });
      await chat.addToolApprovalResponse({ id: "d2", approved: false, reason: "keep it" });
      await chat.sendMessage();
      expect(chat.error).toBeUndefined();
      expect(seen[1]!.messages.at(-1)).toMatchObject({ type: "tool_call", id: "d2", approval: { status: "denied" } });
      const parts = partsOf(chat.messages.at(-1));
      expect(parts.find((part) => part.type === "tool-delete_file")).toMatchObject({
        state: "output-denied",
        toolCallId: "d2",
      });
      expect(parts.at(-1)).toMatchObject({ type: "text", text: "Left it." });
      // The model read the denial as the call's result.
      expect(model.calls[1]!.messages.at(-1)).toMatchObject({ type: "tool_result", id: "d2", isError: true });
    });

    it("a failed run shows as the chat's error", async () => {
      const model = scriptedModel([{ error: new Error("the provider is down") }]);
      const chat = new Chat({
        transport: new ai.DefaultChatTransport({ api: "http://localhost/api/chat", fetch: chatServer(model, []) }),
      });
      await chat.sendMessage({ text: "hello" });
      expect(chat.status).toBe("error");
      expect(chat.error?.message).toContain("the provider is down");
    });
  });
}
