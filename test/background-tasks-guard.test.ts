import { describe, expect, it } from "vitest";
import {
  agentLoop,
  initSession,
  onSessionChange,
  taskTools,
  tool,
  type Guardrail,
  type Message,
  type Session,
  type SessionChange,
  type ToolResultMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { sleep } from "./helpers.ts";
import { deliveries } from "./task-fixtures.ts";

// A task whose outcome holds a secret, after a short while (so it settles after its running note entered).
const leak = tool({
  name: "leak",
  description: "Reads the vault.",
  inputSchema: { type: "object", properties: {} },
  background: true,
  handler: async () => {
    await sleep(30);
    return "the key is SECRET-42";
  },
});

const vault: Guardrail = {
  name: "vault",
  check: ({ text = "" }) =>
    text.includes("SECRET") ? { action: "block", message: "holds a secret" } : { action: "allow" },
};

function results(session: Session): ToolResultMessage[] {
  return session.messages.filter(
    (message): message is ToolResultMessage => "type" in message && message.type === "tool_result",
  );
}

// Every change a bound store would write, as it was written.
function logOf(session: Session): string[] {
  const log: string[] = [];
  onSessionChange(session, (change: SessionChange) => log.push(JSON.stringify(change)));
  return log;
}

describe("background tasks: the toolOutput guardrails check the outcome", () => {
  it("a blocked outcome is delivered as the guardrail's replacement, never raw: not in the session, the record or the log", async () => {
    const session = initSession("sys", "go");
    const log = logOf(session);
    const seen: Message[][] = [];
    await agentLoop(
      scriptedModel([
        [{ type: "tool_call", id: "c1", name: "leak", input: {} }],
        [{ role: "assistant", content: "started" }],
        (view) => {
          seen.push(structuredClone(view.messages));
          return [{ role: "assistant", content: "done" }];
        },
      ]),
      [leak],
      session,
      { guardrails: { toolOutput: [vault] } },
    );
    const [delivery] = deliveries(session);
    expect(delivery).toMatchObject({ role: "user", content: expect.stringContaining("[blocked by vault]") });
    expect(results(session)[0]!.task).toMatchObject({ status: "failed", isError: true });
    expect(JSON.stringify(session)).not.toContain("SECRET");
    expect(JSON.stringify(seen)).not.toContain("SECRET");
    expect(log.join("\n")).not.toContain("SECRET");
    expect(log.join("\n")).toContain("[blocked by vault]");
  });

  it("wait_task's result gives the checked outcome, never the raw one", async () => {
    const session = initSession("sys", "go");
    const log = logOf(session);
    let id = "";
    await agentLoop(
      scriptedModel([
        [{ type: "tool_call", id: "c1", name: "leak", input: {} }],
        (view) => {
          id = results(view)[0]!.task!.id;
          return [{ type: "tool_call", id: "w1", name: "wait_task", input: { id, timeoutSeconds: 30 } }];
        },
        [{ role: "assistant", content: "done" }],
      ]),
      [leak, ...taskTools()],
      session,
      { guardrails: { toolOutput: [vault] } },
    );
    const waited = results(session).find((result) => result.id === "w1")!;
    expect(waited).toMatchObject({ deliversTask: id, isError: true });
    expect(JSON.stringify(waited.output)).toContain("[blocked by vault]");
    expect(deliveries(session)).toHaveLength(1);
    expect(JSON.stringify(session)).not.toContain("SECRET");
    expect(log.join("\n")).not.toContain("SECRET");
  });

  it("the afterToolCall hook sees the outcome and its replacement is what is recorded, as for a direct call", async () => {
    const session = initSession("sys", "go");
    const hooked: unknown[] = [];
    await agentLoop(
      scriptedModel([
        [{ type: "tool_call", id: "c1", name: "leak", input: {} }],
        [{ role: "assistant", content: "ok" }],
        [{ role: "assistant", content: "done" }],
      ]),
      [leak],
      session,
      {
        hooks: {
          afterToolCall: ({ result }) => {
            hooked.push(result.output);
            return typeof result.output === "string" ? result.output.replace(/SECRET-\d+/, "[hidden]") : undefined;
          },
        },
      },
    );
    expect(hooked).toContainEqual("the key is SECRET-42");
    expect(results(session)[0]!.task).toMatchObject({ status: "completed", output: "the key is [hidden]" });
    expect(JSON.stringify(session)).not.toContain("SECRET");
  });
});
