import { describe, expect, it } from "vitest";
import { agentStream, initSession, type ModelMessage } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { sleep, withoutTs } from "./helpers.ts";

const roles = (messages: ReturnType<typeof withoutTs>) =>
  messages.map((message) =>
    "role" in message
      ? `${message.role}:${typeof message.content === "string" ? message.content : JSON.stringify(message.content)}`
      : "id" in message
        ? `${message.type}:${message.id}`
        : message.type,
  );

describe("steering and follow-ups (the coding-agent book, ch. 07)", () => {
  it("steer() adds a user message once the current tool results are in, before the next model call", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "slow", name: "slow", input: {} }],
      (session) => [
        { role: "assistant", content: `last thing I saw: ${(session.messages.at(-1) as { content: string }).content}` },
      ],
    ]);
    const session = initSession("s", "u");
    const run = agentStream(model, [], session, {
      toolHandlers: {
        slow: async () => {
          run.steer("actually, use the staging server");
          await sleep(20);
          return "done";
        },
      },
    });
    await run.result;
    expect(roles(withoutTs(session))).toStrictEqual([
      "system:s",
      "user:u",
      "tool_call:slow",
      "tool_result:slow",
      "user:actually, use the staging server",
      "assistant:last thing I saw: actually, use the staging server",
    ]);
  });

  it("follow-ups run after the task ends, in order, in the same run", async () => {
    const answers: ModelMessage[][] = [
      [{ role: "assistant", content: "first answer" }],
      [{ role: "assistant", content: "second answer" }],
      [{ role: "assistant", content: "third answer" }],
    ];
    const session = initSession("s", "first question");
    const run = agentStream(scriptedModel(answers), [], session);
    run.followUp("second question");
    run.followUp("third question");
    await run.result;
    expect(roles(withoutTs(session)).slice(1)).toStrictEqual([
      "user:first question",
      "assistant:first answer",
      "user:second question",
      "assistant:second answer",
      "user:third question",
      "assistant:third answer",
    ]);
  });

  it("a follow-up or steering taken back before the run reaches it never enters; one already taken cannot be", async () => {
    const session = initSession("s", "first question");
    const run = agentStream(
      scriptedModel([
        [{ type: "tool_call", id: "slow", name: "slow", input: {} }],
        [{ role: "assistant", content: "first answer" }],
        [{ role: "assistant", content: "second answer" }],
      ]),
      [],
      session,
      { toolHandlers: { slow: () => "done" } },
    );
    const takeBackSteering = run.steer("use staging");
    const takeBackWithdrawn = run.followUp("never mind");
    const takeBackSecond = run.followUp("second question");
    expect(takeBackSteering()).toBe(true);
    expect(takeBackSteering()).toBe(false);
    expect(takeBackWithdrawn()).toBe(true);
    await run.result;
    expect(takeBackSecond()).toBe(false);
    expect(roles(withoutTs(session)).slice(1)).toStrictEqual([
      "user:first question",
      "tool_call:slow",
      "tool_result:slow",
      "assistant:first answer",
      "user:second question",
      "assistant:second answer",
    ]);
  });

  it("a follow-up the run never reached (it stopped at its iteration limit) stays queued: taking it back says so", async () => {
    const session = initSession("s", "first question");
    const run = agentStream(
      scriptedModel([[{ type: "tool_call", id: "slow", name: "slow", input: {} }]]),
      [],
      session,
      {
        toolHandlers: { slow: () => "done" },
        maxIterations: 1,
      },
    );
    const takeBack = run.followUp("second question");
    await run.result.catch(() => undefined);
    expect(JSON.stringify(session.messages)).not.toContain("second question");
    expect(takeBack()).toBe(true);
  });
});

it("steer and followUp also take a user message object", async () => {
  const session = initSession("s", "first");
  const run = agentStream(
    scriptedModel([[{ role: "assistant", content: "a" }], [{ role: "assistant", content: "b" }]]),
    [],
    session,
  );
  run.followUp({ role: "user", content: "second" });
  await run.result;
  expect(withoutTs(session)[3]).toStrictEqual({ role: "user", content: "second" });
});
