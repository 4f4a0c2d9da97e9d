import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  forkSession,
  initSession,
  loadedTools,
  pendingApprovals,
  resolveApproval,
  send,
  tool,
  type InvokeModel,
  type ModelMessage,
  type Session,
  type ToolResultMessage,
} from "simple-agent-loop";
import { closeSession, openSession } from "simple-agent-loop/store";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

const ran: string[] = [];
const make = (name: string, description: string, deferred = true) =>
  tool({
    name,
    description,
    inputSchema: { type: "object" },
    deferred,
    handler: () => {
      ran.push(name);
      return `${name} ran`;
    },
  });

const tools = [
  make("read", "Read a file from the workspace.", false),
  make("github_create_issue", "Create an issue in a GitHub repository."),
  make("github_list_issues", "List the issues of a GitHub repository."),
  make("slack_post_message", "Post a message to a Slack channel."),
  make("jira_create_ticket", "Create a ticket in Jira."),
  make("calendar_add_event", "Add an event to the calendar."),
];

// Plays `turns` (each from the session), then answers; records the tool names of each call.
function scripted(turns: ((session: Session) => ModelMessage[])[]) {
  const sent: string[][] = [];
  const invokeModel: InvokeModel = (schemas, session) => {
    sent.push(schemas.map((schema) => schema.name));
    return turns[sent.length - 1]?.(session) ?? [{ role: "assistant", content: "done" }];
  };
  return { invokeModel, sent };
}

const call =
  (id: string, name: string, input: object = {}) =>
  (): ModelMessage[] => [{ type: "tool_call", id, name, input: input as never }];

const outputOf = (session: Session, id: string): ToolResultMessage =>
  session.messages.find(
    (message): message is ToolResultMessage => "type" in message && message.type === "tool_result" && message.id === id,
  )!;

describe("deferred tools and search_tools", () => {
  it("sends deferred tools only once search_tools loaded them, after the others in load order", async () => {
    ran.length = 0;
    const { invokeModel, sent } = scripted([
      call("s1", "search_tools", { query: "post a slack message" }),
      call("s2", "search_tools", { query: "create github issue" }),
      call("c1", "slack_post_message"),
    ]);
    const session = await agentLoop(invokeModel, tools, initSession("s", "go"));
    expectEveryCallAnsweredOnce(session);
    expect(sent[0]).toStrictEqual(["read", "search_tools"]);
    expect(sent[1]).toStrictEqual(["read", "search_tools", "slack_post_message"]);
    // The second search loaded the best matches first; the earlier part of the list is unchanged.
    expect(sent[2]!.slice(0, 3)).toStrictEqual(["read", "search_tools", "slack_post_message"]);
    expect(sent[2]![3]).toBe("github_create_issue");
    expect(sent[2]).not.toContain("calendar_add_event");
    expect(outputOf(session, "s1").output).toStrictEqual({
      loaded: [{ name: "slack_post_message", description: "Post a message to a Slack channel." }],
      note: "These tools can be called from your next step on.",
    });
    expect(ran).toStrictEqual(["slack_post_message"]);
    expect(loadedTools(session.messages, new Set(tools.map((definition) => definition.name)))).toStrictEqual(
      sent[3]!.slice(2),
    );
  });

  it("a tool sharing no word with the query is not loaded; at most five are", async () => {
    const many = Array.from({ length: 8 }, (_, index) => make(`weather_${index}`, `Weather report number ${index}.`));
    const { invokeModel } = scripted([
      call("s1", "search_tools", { query: "quantum chromodynamics" }),
      call("s2", "search_tools", { query: "weather" }),
    ]);
    const session = await agentLoop(invokeModel, many, initSession("s", "go"));
    expect((outputOf(session, "s1").output as { loaded: unknown[] }).loaded).toStrictEqual([]);
    expect((outputOf(session, "s2").output as { loaded: unknown[] }).loaded).toHaveLength(5);
  });

  it("a call to a deferred tool not loaded yet is answered with an error saying to search first, never run", async () => {
    ran.length = 0;
    const { invokeModel } = scripted([
      // Searched for in the same turn: loaded only from the next call on.
      () => [
        { type: "tool_call", id: "s1", name: "search_tools", input: { query: "jira ticket" } },
        { type: "tool_call", id: "c1", name: "jira_create_ticket", input: {} },
      ],
      call("c2", "jira_create_ticket"),
    ]);
    const session = await agentLoop(invokeModel, tools, initSession("s", "go"));
    expect(outputOf(session, "c1")).toMatchObject({ isError: true });
    expect(outputOf(session, "c1").output).toMatch(/not loaded yet: call search_tools/);
    expect(outputOf(session, "c2").output).toBe("jira_create_ticket ran");
    expect(ran).toStrictEqual(["jira_create_ticket"]);
  });

  it("the loaded set comes from the session: a resumed store session and a fork send the same tools", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "deferred-")), "s.jsonl");
    const stored = await openSession(path);
    stored.messages.push(...initSession("s", "go").messages);
    await agentLoop(scripted([call("s1", "search_tools", { query: "calendar event" })]).invokeModel, tools, stored);
    await closeSession(stored);
    const resumed = await openSession(path);
    try {
      const fork = forkSession(resumed);
      send(resumed, "more");
      send(fork, "more");
      const first = scripted([]);
      const second = scripted([]);
      await agentLoop(first.invokeModel, tools, resumed);
      await agentLoop(second.invokeModel, tools, fork);
      expect(first.sent[0]).toStrictEqual(["read", "search_tools", "calendar_add_event"]);
      expect(second.sent[0]).toStrictEqual(first.sent[0]);
    } finally {
      await closeSession(resumed);
    }
  });

  it("the unknown-tool error lists only the tools the model was shown", async () => {
    const { invokeModel } = scripted([call("u1", "nope")]);
    const session = await agentLoop(invokeModel, tools, initSession("s", "go"));
    expect(outputOf(session, "u1").output).toBe('Error: unknown tool "nope". Available tools: read, search_tools.');
  });

  it("without deferred tools nothing is added", async () => {
    const { invokeModel, sent } = scripted([]);
    await agentLoop(invokeModel, [make("read", "Read.", false)], initSession("s", "go"));
    expect(sent).toStrictEqual([["read"]]);
  });
});

describe("deferred tools with approvals", () => {
  it("a loaded deferred tool that needs approval pauses the run; the resumed run runs it and still offers it; before it is loaded it is refused without asking", async () => {
    const deployed: string[] = [];
    const deploy = tool({
      name: "deploy_service",
      description: "Deploy a service to production.",
      inputSchema: { type: "object", properties: { service: { type: "string" } } },
      deferred: true,
      requireApproval: true,
      handler: (input) => {
        deployed.push(String(input.service));
        return `deployed ${String(input.service)}`;
      },
    });
    const call = (id: string, name: string, input: Record<string, string>): ModelMessage => ({
      type: "tool_call",
      id,
      name,
      input,
    });
    const { invokeModel, sent } = scripted([
      // Called before any search: refused as not loaded, with no approval asked.
      () => [call("early", "deploy_service", { service: "api" })],
      () => [call("search", "search_tools", { query: "deploy a service" })],
      () => [call("deploy", "deploy_service", { service: "api" })],
      () => [{ role: "assistant", content: "api deployed" }],
    ]);
    const approvalsAsked: string[] = [];
    const session = await agentLoop(invokeModel, [...tools, deploy], initSession("s", "deploy the api"), {
      onEvent: (event) => {
        if (event.type === "tool-approval-request") approvalsAsked.push(event.id);
      },
    });
    const early = session.messages.find(
      (message): message is ToolResultMessage =>
        "type" in message && message.type === "tool_result" && message.id === "early",
    );
    expect(early?.isError).toBe(true);
    expect(JSON.stringify(early?.output)).toMatch(/search_tools/);
    // Paused at the loaded tool's call, the only approval asked.
    expect(approvalsAsked).toStrictEqual(["deploy"]);
    expect(pendingApprovals(session).map((pending) => pending.id)).toStrictEqual(["deploy"]);
    expect(deployed).toStrictEqual([]);
    resolveApproval(session, "deploy", { approved: true });
    // A new run (as after a restart): the tool set comes from the session, so the tool is still there.
    await agentLoop(invokeModel, [...tools, deploy], session);
    expect(deployed).toStrictEqual(["api"]);
    expect(sent.at(-1)).toContain("deploy_service");
    expect(sent.at(-1)).toStrictEqual(sent.at(-2));
    expect(sent[0]).not.toContain("deploy_service");
    expectEveryCallAnsweredOnce(session);
  });
});
