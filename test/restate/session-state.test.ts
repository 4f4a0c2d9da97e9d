// The session in a Restate object's state: content parts' base64 stored once as chunked blobs the
// entries refer to, each state value within maxStepBytes, read back exactly (no server needed).
import type { ObjectContext } from "@restatedev/restate-sdk";
import { describe, expect, it } from "vitest";
import { extendSession, imagePart, send, type Session } from "simple-agent-loop";
import { createReplayClock } from "../../src/restate/replay-clock.ts";
import { readEntries, recordSession, sessionFromEntries } from "../../src/restate/session-state.ts";
import { withoutTs } from "../helpers.ts";

// The part of an object context the session state uses: a key-value map.
function fakeContext(): { ctx: ObjectContext; state: Map<string, unknown> } {
  const state = new Map<string, unknown>();
  const ctx = {
    get: (key: string) => Promise.resolve(state.has(key) ? structuredClone(state.get(key)) : null),
    set: (key: string, value: unknown) => void state.set(key, structuredClone(value)),
  } as unknown as ObjectContext;
  return { ctx, state };
}

describe("the session in the object's state", () => {
  it("stores images as chunked blobs within maxStepBytes, once per content, and reads the session back", async () => {
    const maxStepBytes = 64 * 1024;
    const image = imagePart(
      Uint8Array.from({ length: 200 * 1024 }, (_, index) => index % 251),
      "image/png",
    );
    const { ctx, state } = fakeContext();
    const session: Session = { messages: [] };
    const recorder = recordSession(ctx, session, createReplayClock(0), 0, maxStepBytes);
    send(session, [{ type: "text", text: "this" }, image]);
    extendSession(session, { type: "tool_call", id: "c1", name: "shoot", input: {} });
    extendSession(session, {
      type: "tool_result",
      id: "c1",
      output: "again",
      content: [{ type: "text", text: "again" }, image],
    });
    recorder.flush();
    recorder.stop();
    for (const [key, value] of state)
      expect(Buffer.byteLength(JSON.stringify(value)), key).toBeLessThanOrEqual(maxStepBytes);
    const chunkKeys = [...state.keys()].filter((key) => /^blob:[0-9a-f]{64}:\d+$/.test(key));
    // 200 KB is 273 KB of base64: five chunks, stored once for both messages.
    expect(chunkKeys).toHaveLength(5);
    for (const key of ["entry:0", "entry:2"]) expect(JSON.stringify(state.get(key))).toMatch(/"blob":"[0-9a-f]{64}"/);
    const entries = await readEntries(ctx);
    expect(withoutTs(sessionFromEntries(entries!, "test"))).toStrictEqual(withoutTs(session));
  });
});
