import { describe, expect, it } from "vitest";
import { compactSession, estimateTokens, imagePart, initSession, type Session } from "simple-agent-loop";

// 48 KB of bytes: the placeholder says so.
const screenshot = imagePart(new Uint8Array(48 * 1024), "image/png");

function sessionWithImages(): Session {
  const session = initSession("s", [{ type: "text", text: "look" }, screenshot]);
  for (let turn = 0; turn < 3; turn++) {
    session.messages.push(
      { type: "tool_call", id: `c${turn}`, name: "shoot", input: {} },
      {
        type: "tool_result",
        id: `c${turn}`,
        output: `shot ${turn}`,
        content: [{ type: "text", text: `shot ${turn}` }, screenshot],
      },
    );
  }
  session.messages.push({ role: "assistant", content: "done" });
  return session;
}

describe("compaction and token estimates with images", () => {
  it("replaces images older than the window with a placeholder and keeps the recent ones", () => {
    const session = compactSession(sessionWithImages(), { keepTurns: 2 });
    expect(session.messages[1]).toMatchObject({
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "text", text: "[image: image/png, 48 KB, omitted]" },
      ],
    });
    expect(session.messages[3]).toMatchObject({
      type: "tool_result",
      output: "shot 0",
      content: [
        { type: "text", text: "shot 0" },
        { type: "text", text: "[image: image/png, 48 KB, omitted]" },
      ],
    });
    // The last turns keep their images.
    expect(session.messages.at(-2)).toMatchObject({ content: [{ type: "text", text: "shot 2" }, screenshot] });
    expect(JSON.parse(JSON.stringify(session))).toStrictEqual(session);
  });

  it("counts an image as about 1,600 tokens, not as its base64 characters", () => {
    const big = imagePart(new Uint8Array(1024 * 1024), "image/png");
    const session = initSession("s", [{ type: "text", text: "what is this?" }, big]);
    const tokens = estimateTokens(session.messages);
    expect(tokens).toBeGreaterThanOrEqual(1600);
    expect(tokens).toBeLessThan(1700);
  });
});
