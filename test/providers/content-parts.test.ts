// Adapter-specific shapes of content parts, beyond what the conformance suite checks of all.
import { describe, expect, it } from "vitest";
import { agentLoop, filePart, imagePart, initSession, toolContent, type Session } from "simple-agent-loop";
import { gemini } from "simple-agent-loop/google";
import { toBedrockRequest } from "../../src/providers/bedrock/convert.ts";
import { toGeminiRequest } from "../../src/providers/google/convert.ts";
import { toOpenAIChatRequest } from "../../src/providers/openai/chat-convert.ts";

const png = "iVBORw0KGgo=";

function sessionWithToolImage(): Session {
  const session = initSession("s", "Look.");
  session.messages.push(
    { type: "tool_call", id: "call_1", name: "shoot", input: {} },
    {
      type: "tool_result",
      id: "call_1",
      output: "screenshot of /",
      content: toolContent([{ type: "text", text: "screenshot of /" }, imagePart(png, "image/png")]).content,
    },
  );
  return session;
}

describe("content parts, adapter by adapter", () => {
  it("Gemini before 3 takes a tool result's images in a user content right after the function responses", () => {
    const request = toGeminiRequest(sessionWithToolImage(), [], { model: "gemini-2.5-flash" });
    expect(request.contents.slice(-2)).toStrictEqual([
      {
        role: "user",
        parts: [{ functionResponse: { name: "shoot", response: { output: "screenshot of /" } } }],
      },
      {
        role: "user",
        parts: [
          { text: "The images and files of the result of tool call call_1 (shoot):" },
          { inlineData: { mimeType: "image/png", data: png } },
        ],
      },
    ]);
  });

  it("Gemini 3 takes them inside the functionResponse", () => {
    const request = toGeminiRequest(sessionWithToolImage(), [], { model: "gemini-3-pro-preview" });
    expect(request.contents.at(-1)).toStrictEqual({
      role: "user",
      parts: [
        {
          functionResponse: {
            name: "shoot",
            response: { output: "screenshot of /" },
            parts: [{ inlineData: { mimeType: "image/png", data: png } }],
          },
        },
      ],
    });
  });

  it("OpenAI Chat sends a tool result's text in the tool message and its image in a user message naming the call", () => {
    const request = toOpenAIChatRequest(sessionWithToolImage(), [], { model: "gpt-test" });
    expect(request.messages.slice(-2)).toStrictEqual([
      { role: "tool", tool_call_id: "call_1", content: "screenshot of /" },
      {
        role: "user",
        content: [
          { type: "text", text: "The images and files of the result of tool call call_1 (shoot):" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
        ],
      },
    ]);
  });

  it("Bedrock names documents with what Converse allows, unique within the request", () => {
    const session = initSession("s", [
      filePart("JVBERi0=", "application/pdf", "report.pdf"),
      filePart("JVBERi0=", "application/pdf", "report.pdf"),
      filePart("JVBERi0=", "application/pdf", "Q3_results (final).v2.pdf"),
      filePart("JVBERi0=", "application/pdf"),
    ]);
    const request = toBedrockRequest(session, [], {});
    const names = request.messages[0]!.content.map(
      (block) => ((block as { document?: { name: string } }).document ?? { name: "" }).name,
    );
    expect(names).toStrictEqual(["report", "report (2)", "Q3 results (final) v2", "document"]);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9\-()[\]]+(?: [A-Za-z0-9\-()[\]]+)*$/);
  });

  it("Bedrock refuses a document type Converse does not read, naming the part", () => {
    const session = initSession("s", [filePart("AAAA", "application/zip", "a.zip")]);
    expect(() => toBedrockRequest(session, [], {})).toThrow(
      /the bedrock adapter cannot send a file part \("a.zip", application\/zip, 1 KB\) in a user message: Converse takes documents as/,
    );
  });

  it("a downloaded URL part past downloadParts.maxBytes fails the call before the model request, naming the URL", async () => {
    const urls: string[] = [];
    const model = gemini({
      model: "gemini-test",
      apiKey: "k",
      // The adapter's own fetch downloads; `allow` spares the name lookup (no network here).
      downloadParts: { maxBytes: 10, allow: () => true },
      fetch: async (url) => {
        urls.push(url);
        return new Response(new Uint8Array(64), { headers: { "content-type": "image/png" } });
      },
    });
    const session = initSession("s", [{ type: "image", url: "https://example.com/big.png" }]);
    await expect(agentLoop(model, [], session)).rejects.toThrow(
      /google: could not download "https:\/\/example.com\/big.png" \(more than downloadParts\.maxBytes 10 bytes\)/,
    );
    expect(urls).toStrictEqual(["https://example.com/big.png"]);
  });
});
