import { describe, expect, it } from "vitest";
import {
  agentLoop,
  contentText,
  extendSession,
  filePart,
  imagePart,
  initSession,
  jsonSchema,
  resolveApproval,
  send,
  tool,
  toolContent,
  type ContentPart,
  type Message,
  type Session,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { withoutTs } from "./helpers.ts";

// The 8-byte PNG signature: small, and not valid UTF-8, so a text round trip would show.
const pngBytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const pngBase64 = "iVBORw0KGgo=";

describe("content part helpers", () => {
  it("imagePart and filePart encode bytes as base64 and accept base64 or a data: URL as it is", () => {
    expect(imagePart(pngBytes, "image/png")).toStrictEqual({ type: "image", mediaType: "image/png", data: pngBase64 });
    expect(imagePart(pngBase64, "image/png")).toStrictEqual({ type: "image", mediaType: "image/png", data: pngBase64 });
    expect(imagePart(`data:image/png;base64,${pngBase64}`, "image/png")).toStrictEqual({
      type: "image",
      mediaType: "image/png",
      data: pngBase64,
    });
    expect(filePart(new TextEncoder().encode("%PDF-1.4"), "application/pdf", "report.pdf")).toStrictEqual({
      type: "file",
      mediaType: "application/pdf",
      data: "JVBERi0xLjQ=",
      filename: "report.pdf",
    });
    expect(filePart("JVBERi0xLjQ=", "application/pdf")).toStrictEqual({
      type: "file",
      mediaType: "application/pdf",
      data: "JVBERi0xLjQ=",
    });
  });

  it("imagePart refuses what is not base64 or not a media type, naming the helper", () => {
    expect(() => imagePart("not base64!", "image/png")).toThrow(/imagePart: "data" is not valid base64/);
    expect(() => imagePart(pngBase64, "png")).toThrow(/imagePart: "mediaType" must be a media type/);
  });

  it("contentText joins the text parts and ignores the others", () => {
    expect(
      contentText([
        { type: "text", text: "a" },
        { type: "image", url: "https://example.com/a.png" },
        { type: "text", text: "b" },
      ]),
    ).toBe("a\nb");
    expect(contentText("plain")).toBe("plain");
  });
});

describe("content parts in the session", () => {
  it("initSession, send and extendSession take content parts, which survive a JSON round trip", () => {
    const parts: ContentPart[] = [
      { type: "text", text: "What is in these?" },
      imagePart(pngBytes, "image/png"),
      { type: "image", url: "https://example.com/cat.jpg", mediaType: "image/jpeg" },
      filePart("JVBERi0xLjQ=", "application/pdf", "report.pdf"),
      { type: "file", url: "https://example.com/paper.pdf" },
    ];
    const session = initSession("s", parts);
    send(session, [{ type: "text", text: "and this" }, imagePart(pngBytes, "image/png")]);
    extendSession(session, {
      type: "tool_result",
      id: "c1",
      output: "seen",
      content: [{ type: "text", text: "seen" }],
    });
    expect(session.messages[1]).toMatchObject({ role: "user", content: parts });
    expect(JSON.parse(JSON.stringify(session))).toStrictEqual(session);
  });

  it.each<[string, unknown, RegExp]>([
    ["a part that is not an object", ["text"], /user message content\[0\] must be an object/],
    ["an unknown part type", [{ type: "video", data: "" }], /content\[0\]: unknown content part type "video"/],
    ["a text part without text", [{ type: "text" }], /a text part needs a string "text"/],
    [
      "an image with both data and url",
      [{ type: "image", mediaType: "image/png", data: pngBase64, url: "https://a.example/x.png" }],
      /exactly one of "data" \(base64\) and "url"/,
    ],
    ["an image with neither", [{ type: "image", mediaType: "image/png" }], /exactly one of "data"/],
    ["data without its media type", [{ type: "image", data: pngBase64 }], /with "data" needs its "mediaType"/],
    [
      "data with a data: prefix",
      [{ type: "image", mediaType: "image/png", data: `data:image/png;base64,${pngBase64}` }],
      /without a "data:" prefix/,
    ],
    ["data that is not base64", [{ type: "file", mediaType: "application/pdf", data: "%PDF" }], /not valid base64/],
    ["a url that is not one", [{ type: "image", url: "cat.png" }], /"url" is not a valid URL/],
    ["a file: url", [{ type: "file", url: "file:///etc/passwd" }], /must be an https URL, not file:/],
    [
      "a filename that is not a string",
      [{ type: "file", mediaType: "application/pdf", data: "", filename: 3 }],
      /"filename" must be a string/,
    ],
    ["content that is neither string nor array", { type: "text", text: "x" }, /must be a string or an array/],
  ])("extendSession refuses %s with an error naming the part, and appends nothing", (_, content, error) => {
    const session: Session = { messages: [] };
    expect(() => extendSession(session, { role: "user", content } as Message)).toThrow(error);
    expect(() => send(session, content as ContentPart[])).toThrow(error);
    expect(session.messages).toStrictEqual([]);
  });

  it("extendSession refuses a tool result whose content is malformed, naming the call", () => {
    const session: Session = { messages: [] };
    expect(() =>
      extendSession(session, {
        type: "tool_result",
        id: "c1",
        output: "",
        content: [{ type: "image", url: "ftp://x" }],
      }),
    ).toThrow(/tool result "c1" content\[0\]: "url" must be an https URL/);
    expect(session.messages).toStrictEqual([]);
  });
});

describe("tools returning content parts", () => {
  const screenshot = tool({
    name: "screenshot",
    description: "Screenshot of a page.",
    inputSchema: jsonSchema<{ path: string }>({ type: "object", properties: { path: { type: "string" } } }),
    handler: ({ path }) =>
      toolContent([
        { type: "text", text: `screenshot of ${path}` },
        imagePart(pngBytes, "image/png"),
        { type: "text", text: "800x600" },
      ]),
  });

  it("a handler's toolContent becomes the result's content, with its text parts joined as output, and reaches the model", async () => {
    const model = scriptedModel([
      { type: "tool_call", id: "c1", name: "screenshot", input: { path: "/" } },
      { role: "assistant", content: "a page" },
    ]);
    const session = await agentLoop(model, [screenshot], initSession("s", "look"));
    const expected = {
      type: "tool_result",
      id: "c1",
      output: "screenshot of /\n800x600",
      content: [
        { type: "text", text: "screenshot of /" },
        { type: "image", mediaType: "image/png", data: pngBase64 },
        { type: "text", text: "800x600" },
      ],
    };
    expect(withoutTs(session)[3]).toStrictEqual(expected);
    expect(withoutTs(model.calls[1]!).at(-1)).toStrictEqual(expected);
    expect(JSON.parse(JSON.stringify(session))).toStrictEqual(session);
  });

  it("a handler whose toolContent holds a malformed part gets an error result naming it", async () => {
    const broken = tool({
      name: "broken",
      description: "Returns a bad image.",
      inputSchema: { type: "object" },
      handler: () => toolContent([{ type: "image", mediaType: "image/png", data: "@@@" }]),
    });
    const model = scriptedModel([
      { type: "tool_call", id: "c1", name: "broken", input: {} },
      { role: "assistant", content: "ok" },
    ]);
    const session = await agentLoop(model, [broken], initSession("s", "go"));
    expect(session.messages[3]).toMatchObject({
      type: "tool_result",
      id: "c1",
      isError: true,
      output: expect.stringMatching(/toolContent part 0: "data" is not valid base64/) as unknown,
    });
    expect(session.messages[3]).not.toHaveProperty("content");
  });

  it("afterToolCall may replace a result with toolContent", async () => {
    const model = scriptedModel([
      { type: "tool_call", id: "c1", name: "screenshot", input: { path: "/" } },
      { role: "assistant", content: "ok" },
    ]);
    const session = await agentLoop(model, [screenshot], initSession("s", "go"), {
      hooks: { afterToolCall: () => toolContent([{ type: "text", text: "redacted" }]) },
    });
    expect(withoutTs(session)[3]).toStrictEqual({
      type: "tool_result",
      id: "c1",
      output: "redacted",
      content: [{ type: "text", text: "redacted" }],
    });
  });

  it("a result held while an earlier call waits for approval keeps its content", async () => {
    const guarded = tool({
      name: "guarded",
      description: "Needs approval.",
      inputSchema: { type: "object" },
      requireApproval: true,
      handler: () => "done",
    });
    const model = scriptedModel([
      [
        { type: "tool_call", id: "c1", name: "guarded", input: {} },
        { type: "tool_call", id: "c2", name: "screenshot", input: { path: "/x" } },
      ],
      { role: "assistant", content: "ok" },
    ]);
    const session = await agentLoop(model, [guarded, screenshot], initSession("s", "go"));
    const paused = JSON.parse(JSON.stringify(session)) as Session;
    resolveApproval(paused, "c1", { approved: true });
    await agentLoop(model, [guarded, screenshot], paused);
    const result = paused.messages.find(
      (message) => "type" in message && message.type === "tool_result" && message.id === "c2",
    );
    expect(result).toMatchObject({ output: "screenshot of /x\n800x600", content: expect.any(Array) as unknown });
    expect(model.calls[1]!.messages.at(-1)).toMatchObject({ id: "c2", content: expect.any(Array) as unknown });
  });
});
