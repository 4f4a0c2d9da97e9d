import { describe, expect, it } from "vitest";
import { agentLoop, isAgentError, tool } from "simple-agent-loop";
import { fromUIMessages } from "simple-agent-loop/http";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";

describe("fromUIMessages", () => {
  it("maps text, reasoning, files, steps and every tool state to the session's messages", () => {
    const session = fromUIMessages(
      [
        { id: "0", role: "system", parts: [{ type: "text", text: "Be brief." }] },
        {
          id: "1",
          role: "user",
          parts: [
            { type: "text", text: "What is in these?" },
            { type: "file", mediaType: "image/png", url: "data:image/png;base64,iVBORw0KGgo=" },
            { type: "file", mediaType: "application/pdf", url: "https://example.com/a.pdf", filename: "a.pdf" },
          ],
        },
        {
          id: "2",
          role: "assistant",
          parts: [
            { type: "step-start" },
            { type: "reasoning", text: "Look first." },
            { type: "text", text: "Looking." },
            {
              type: "tool-read",
              toolCallId: "r1",
              state: "output-available",
              input: { path: "a" },
              output: { size: 1 },
            },
            {
              type: "dynamic-tool",
              toolName: "grep",
              toolCallId: "g1",
              state: "output-error",
              input: {},
              errorText: "bad",
            },
            {
              type: "tool-rm",
              toolCallId: "d1",
              state: "output-denied",
              input: { path: "a" },
              approval: { id: "d1", approved: false, reason: "no" },
            },
            { type: "source-url", sourceId: "s", url: "https://example.com" },
            { type: "step-start" },
            { type: "text", text: "Done." },
            {
              type: "tool-rm",
              toolCallId: "d2",
              state: "approval-responded",
              input: { path: "b" },
              approval: { id: "d2", approved: true },
            },
            {
              type: "tool-rm",
              toolCallId: "d3",
              state: "approval-requested",
              input: { path: "c" },
              approval: { id: "d3" },
            },
          ],
        },
      ],
      { urlParts: true },
    );
    expect(session.messages).toStrictEqual([
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "What is in these?" },
          { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" },
          { type: "file", url: "https://example.com/a.pdf", mediaType: "application/pdf", filename: "a.pdf" },
        ],
      },
      { type: "thinking", content: "Look first." },
      { role: "assistant", content: "Looking." },
      { type: "tool_call", id: "r1", name: "read", input: { path: "a" } },
      { type: "tool_call", id: "g1", name: "grep", input: {} },
      { type: "tool_call", id: "d1", name: "rm", input: { path: "a" } },
      { type: "tool_result", id: "r1", output: { size: 1 } },
      { type: "tool_result", id: "g1", output: "bad", isError: true },
      { type: "tool_result", id: "d1", output: "Rejected: no", isError: true },
      { role: "assistant", content: "Done." },
      {
        type: "tool_call",
        id: "d2",
        name: "rm",
        input: { path: "b" },
        approval: { status: "approved", input: { path: "b" } },
      },
      { type: "tool_call", id: "d3", name: "rm", input: { path: "c" }, approval: { status: "pending" } },
    ]);
  });

  it("a decided call runs when the loop resumes the session; every call is answered once", async () => {
    const ran: string[] = [];
    const rm = tool({
      name: "rm",
      description: "removes",
      inputSchema: { type: "object" },
      requireApproval: true,
      handler: ({ path }) => {
        ran.push(String(path));
        return "removed";
      },
    });
    const session = fromUIMessages([
      { id: "1", role: "user", parts: [{ type: "text", text: "rm b" }] },
      {
        id: "2",
        role: "assistant",
        parts: [
          {
            type: "tool-rm",
            toolCallId: "d2",
            state: "approval-responded",
            input: { path: "b" },
            approval: { id: "d2", approved: true },
          },
        ],
      },
    ]);
    await agentLoop(scriptedModel([[{ role: "assistant", content: "Removed." }]]), [rm], session);
    expect(ran).toStrictEqual(["b"]);
    expectEveryCallAnsweredOnce(session);
  });

  it("refuses a file the page gives as a link unless urlParts is on: the server would fetch it for the page", () => {
    const messages = [
      {
        id: "1",
        role: "user",
        parts: [
          { type: "text", text: "Summarize." },
          { type: "file", mediaType: "application/pdf", url: "http://127.0.0.1:8080/admin/export", filename: "a.pdf" },
        ],
      },
    ];
    const error: unknown = (() => {
      try {
        return fromUIMessages(messages);
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(isAgentError(error)).toBe(true);
    expect((error as Error).message).toBe(
      "fromUIMessages: message 0, part 1: a file given as a link is refused (pass the file as a data: URL, or fromUIMessages(messages, { urlParts: true }) to take links)",
    );
    expect(fromUIMessages(messages, { urlParts: true }).messages[0]).toStrictEqual({
      role: "user",
      content: [
        { type: "text", text: "Summarize." },
        { type: "file", url: "http://127.0.0.1:8080/admin/export", mediaType: "application/pdf", filename: "a.pdf" },
      ],
    });
    expect(() => fromUIMessages(messages, { urlParts: "yes" } as never)).toThrow(/options\.urlParts must be a boolean/);
  });

  it("refuses what is not UI messages with an AgentError naming the message and part", () => {
    const cases: [unknown, string][] = [
      [{}, "an array"],
      [[null], "message 0 is not an object"],
      [[{ role: "user" }], "message 0 has no parts array"],
      [[{ role: "tool", parts: [] }], 'role "tool"'],
      [[{ role: "user", parts: [{ type: "text" }] }], "message 0, part 0 needs text"],
      [[{ role: "assistant", parts: [{ type: "tool-x", state: "output-available" }] }], "needs toolCallId"],
      [
        [
          {
            role: "assistant",
            parts: [{ type: "tool-x", toolCallId: "a", state: "approval-responded", approval: {} }],
          },
        ],
        "approval.approved",
      ],
      [
        [{ role: "user", parts: [{ type: "file", mediaType: "image/png", url: "file:///etc/passwd" }] }],
        "data: URL or an http(s) link",
      ],
      [
        [{ role: "user", parts: [{ type: "file", mediaType: "text/plain", url: "data:text/plain,hello" }] }],
        "must be base64",
      ],
    ];
    for (const [input, message] of cases) {
      let error: unknown;
      try {
        fromUIMessages(input);
      } catch (thrown) {
        error = thrown;
      }
      expect(isAgentError(error), message).toBe(true);
      expect((error as Error).message).toContain(message);
    }
  });
});
