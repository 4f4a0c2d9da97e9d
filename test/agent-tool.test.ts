import { describe, expect, it } from "vitest";
import {
  agentLoop,
  defineAgent,
  imagePart,
  initSession,
  runAgent,
  sessionMetrics,
  subagentTool,
  tool,
  toolContent,
  type AgentEvent,
  type Message,
  type Session,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

const call = (id: string, name: string, input: Record<string, string> = {}) => ({
  type: "tool_call" as const,
  id,
  name,
  input,
});
const answer = (content: string) => ({ role: "assistant" as const, content });
const png = imagePart(new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]), "image/png");

function screenshotTool() {
  return tool({
    name: "screenshot",
    description: "Takes a screenshot.",
    inputSchema: { type: "object", properties: {} },
    handler: () => toolContent([{ type: "text", text: "screenshot of /" }, png]),
  });
}

describe("subagentTool(agent, options)", () => {
  it('answer: "verbatim" ends the parent run with the sub-agent\'s answer, without another parent model call', async () => {
    const researcher = defineAgent({
      name: "researcher",
      description: "Researches a question.",
      systemPrompt: "You research.",
      invokeModel: scriptedModel([answer("The answer is 42, from three sources.")]),
    });
    let parentCalls = 0;
    const parentModel = scriptedModel([
      () => {
        parentCalls++;
        return [call("c1", "researcher", { prompt: "what is the answer?" }), call("c2", "note")];
      },
    ]);
    const log: string[] = [];
    const note = tool({
      name: "note",
      description: "Notes.",
      inputSchema: { type: "object", properties: {} },
      handler: () => {
        log.push("note ran");
        return "noted";
      },
    });
    const events: AgentEvent[] = [];
    const session = await agentLoop(
      parentModel,
      [subagentTool(researcher, { answer: "verbatim" }), note],
      initSession("s", "ask the researcher"),
      { onEvent: (event) => events.push(event) },
    );
    expect(parentCalls).toBe(1);
    expect(log).toStrictEqual(["note ran"]);
    expectEveryCallAnsweredOnce(session);
    expect(session.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: "The answer is 42, from three sources.",
      answerFrom: "c1",
    });
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "done" });
    // No model wrote the answer: the metrics count the one parent call.
    expect(sessionMetrics(session).modelCalls).toBe(1);
    // The session stays valid: a follow-up question goes to the model as usual.
    const followUp = scriptedModel([answer("anything else?")]);
    session.messages.push({ role: "user", content: "thanks" });
    await agentLoop(followUp, [subagentTool(researcher, { answer: "verbatim" })], session);
    expect(session.messages.at(-1)).toMatchObject({ content: "anything else?" });
  });

  it("a resumed session whose verbatim result is in but not its answer ends with the answer, no model call", async () => {
    const researcher = defineAgent({ name: "researcher", systemPrompt: "r", invokeModel: scriptedModel([]) });
    const session = initSession("s", "q");
    session.messages.push(call("c1", "researcher", { prompt: "q" }), {
      type: "tool_result",
      id: "c1",
      output: "found it",
    });
    const never = scriptedModel([]);
    await agentLoop(never, [subagentTool(researcher, { answer: "verbatim" })], session);
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "found it", answerFrom: "c1" });
  });

  it("a failed verbatim sub-agent does not end the run: the parent's model reads the error", async () => {
    const broken = defineAgent({
      name: "broken",
      systemPrompt: "b",
      invokeModel: () => {
        throw new Error("provider down");
      },
      options: { retry: false },
    });
    const session = await agentLoop(
      scriptedModel([[call("c1", "broken", { prompt: "x" })], answer("the helper failed, sorry")]),
      [subagentTool(broken, { answer: "verbatim" })],
      initSession("s", "q"),
    );
    expectEveryCallAnsweredOnce(session);
    expect(session.messages.at(-1)).toMatchObject({ content: "the helper failed, sorry" });
    expect(session.messages.at(-1)).not.toHaveProperty("answerFrom");
  });

  it("runs the agent with its own prompt and handoffs; its images reach the parent as tool-result content parts", async () => {
    const saw: Message[][] = [];
    const browser = defineAgent({
      name: "browser",
      systemPrompt: "You browse.",
      invokeModel: scriptedModel([[call("s1", "screenshot")], answer("The page shows a login form.")]),
      tools: [screenshotTool()],
    });
    const session = await agentLoop(
      scriptedModel([
        [call("c1", "browser", { prompt: "look at /" })],
        (seenSession: Session) => {
          saw.push(structuredClone(seenSession.messages));
          return [answer("there is a login form")];
        },
      ]),
      [subagentTool(browser)],
      initSession("s", "what is on /?"),
    );
    const result = session.messages.find((message) => "type" in message && message.type === "tool_result");
    expect(result).toMatchObject({
      type: "tool_result",
      id: "c1",
      output: "The page shows a login form.",
      content: [{ type: "text", text: "The page shows a login form." }, png],
    });
    expect(JSON.stringify(saw[0])).toContain(png.data);
  });

  it("the inline form passes the subagent's images too", async () => {
    const inline = subagentTool({
      name: "browse",
      description: "Browse.",
      systemPrompt: "You browse.",
      invokeModel: scriptedModel([[call("s1", "screenshot")], answer("Looks fine.")]),
      tools: [screenshotTool()],
    });
    const session = await agentLoop(
      scriptedModel([[call("c1", "browse", { prompt: "look" })], answer("ok")]),
      [inline],
      initSession("s", "q"),
    );
    const result = session.messages.find((message) => "type" in message && message.type === "tool_result");
    expect(result).toMatchObject({ output: "Looks fine.", content: [{ type: "text", text: "Looks fine." }, png] });
  });

  it("follows the sub-agent's own handoffs inside its call", async () => {
    const specialist = defineAgent({
      name: "specialist",
      systemPrompt: "sp",
      invokeModel: scriptedModel([answer("deep answer")]),
    });
    const front = defineAgent({
      name: "front",
      systemPrompt: "f",
      invokeModel: scriptedModel([[call("h1", "transfer_to_specialist")]]),
      handoffs: [specialist],
    });
    const session = await runAgent(
      defineAgent({
        name: "boss",
        systemPrompt: "boss",
        invokeModel: scriptedModel([[call("c1", "front", { prompt: "hard question" })]]),
        tools: [subagentTool(front, { answer: "verbatim" })],
      }),
      initSession("s", "q"),
    );
    expect(session.messages.at(-1)).toMatchObject({ content: "deep answer", answerFrom: "c1", agent: "boss" });
  });
});
