import { describe, expect, it } from "vitest";
import {
  agentLoop,
  agentStream,
  codeModeDeclarations,
  codeModeName,
  defineAgent,
  initSession,
  pendingApprovals,
  resolveApproval,
  runAgent,
  subagentTool,
  tool,
  type ModelMessage,
  type Session,
  type ToolDefinition,
  type ToolResultMessage,
  type ToolSchema,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";

// A lookup the model sees from the start, and a deferred weather tool that search_tools loads.
function makeTools(ran: string[] = [], weatherOptions: { requireApproval?: boolean } = {}): ToolDefinition[] {
  const lookup = tool({
    name: "lookup",
    description: "Looks a record up by key.",
    inputSchema: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
    handler: (input) => {
      ran.push(`lookup ${String(input.key)}`);
      return { key: input.key };
    },
  });
  const weather = tool({
    name: "weather_forecast",
    description: "Gives the weather forecast for a city.",
    inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    deferred: true,
    ...weatherOptions,
    handler: (input) => {
      ran.push(`weather ${String(input.city)}`);
      return { city: input.city, sky: "clear" };
    },
  });
  return [lookup, weather];
}

const search = (id: string): ModelMessage => ({
  type: "tool_call",
  id,
  name: "search_tools",
  input: { query: "weather forecast" },
});
const codeCall = (code: string, id = "call_7"): ModelMessage => ({
  type: "tool_call",
  id,
  name: codeModeName,
  input: { code },
});
const answer: ModelMessage = { role: "assistant", content: "done" };

function resultOf(session: Session, id: string): ToolResultMessage {
  const found = session.messages.find(
    (message): message is ToolResultMessage => "type" in message && message.type === "tool_result" && message.id === id,
  );
  if (found === undefined) throw new Error(`no result ${id}`);
  return found;
}

function runCodeOf(schemas: readonly ToolSchema[]): ToolSchema {
  const found = schemas.find((schema) => schema.name === codeModeName);
  if (found === undefined) throw new Error("no run_code offered");
  return found;
}

const weatherCode = "return await tools.weather_forecast({ city: 'Oslo' })";

describe("code mode with deferred tools", () => {
  it("declares and lets a program call a deferred tool from the model call after search_tools loaded it, not before", async () => {
    const ran: string[] = [];
    const tools = makeTools(ran);
    const model = scriptedModel([[codeCall(weatherCode, "early")], [search("s1")], [codeCall(weatherCode)], [answer]]);
    const session = await agentLoop(model, tools, initSession("s", "u"), { codeMode: true });
    const [lookup, weather] = tools as [ToolDefinition, ToolDefinition];
    // Before the search: only lookup is declared, and the program cannot reach the weather tool.
    expect(runCodeOf(model.toolsSeen[0]!).description).toContain(codeModeDeclarations([lookup]));
    expect(runCodeOf(model.toolsSeen[0]!).description).not.toContain("weather_forecast");
    expect(resultOf(session, "early")).toMatchObject({ isError: true });
    // After it: the description declares both, and the program's call runs as a call of its own.
    expect(runCodeOf(model.toolsSeen[2]!).description).toContain(codeModeDeclarations([lookup, weather]));
    expect(resultOf(session, "call_7").output).toStrictEqual({ city: "Oslo", sky: "clear" });
    expect(resultOf(session, "call_7").programCalls).toStrictEqual([
      {
        id: "call_7.1",
        name: "weather_forecast",
        input: { city: "Oslo" },
        output: { city: "Oslo", sky: "clear" },
      },
    ]);
    expect(ran).toStrictEqual(["weather Oslo"]);
    expectEveryCallAnsweredOnce(session);
  });

  it("does not let a program reach a tool that a search of the same turn loads (as a direct call of that turn could not)", async () => {
    const ran: string[] = [];
    const model = scriptedModel([[search("s1"), codeCall(weatherCode)], [answer]]);
    const session = await agentLoop(model, makeTools(ran), initSession("s", "u"), { codeMode: true });
    expect(resultOf(session, "call_7").isError).toBe(true);
    expect(ran).toStrictEqual([]);
  });

  it("a deferred tool named in codeMode.tools is callable, and declared, only once loaded", async () => {
    const ran: string[] = [];
    const model = scriptedModel([[codeCall(weatherCode, "early")], [search("s1")], [codeCall(weatherCode)], [answer]]);
    const session = await agentLoop(model, makeTools(ran), initSession("s", "u"), {
      codeMode: { tools: ["weather_forecast"] },
    });
    expect(runCodeOf(model.toolsSeen[0]!).description).not.toContain("weather_forecast");
    expect(resultOf(session, "early").isError).toBe(true);
    expect(runCodeOf(model.toolsSeen[2]!).description).toContain("weather_forecast(input:");
    expect(runCodeOf(model.toolsSeen[2]!).description).not.toContain("lookup(input:");
    expect(resultOf(session, "call_7").output).toStrictEqual({ city: "Oslo", sky: "clear" });
    expect(ran).toStrictEqual(["weather Oslo"]);
  });

  it("exclusive: search_tools still loads a deferred tool, which then only a program can call", async () => {
    const ran: string[] = [];
    const model = scriptedModel([
      [search("s1")],
      [{ type: "tool_call", id: "direct", name: "weather_forecast", input: { city: "Bergen" } }, codeCall(weatherCode)],
      [answer],
    ]);
    const session = await agentLoop(model, makeTools(ran), initSession("s", "u"), { codeMode: { exclusive: true } });
    expect(model.toolsSeen[0]!.map((schema) => schema.name)).toStrictEqual([codeModeName, "search_tools"]);
    expect(resultOf(session, "s1").output).toMatchObject({
      loaded: [{ name: "weather_forecast" }],
      note: expect.stringContaining("weather_forecast only from a run_code program"),
    });
    // Loaded, it is declared to programs but never sent on its own.
    expect(model.toolsSeen[1]!.map((schema) => schema.name)).toStrictEqual([codeModeName, "search_tools"]);
    expect(runCodeOf(model.toolsSeen[1]!).description).toContain("weather_forecast(input:");
    expect(resultOf(session, "direct")).toMatchObject({
      isError: true,
      output: expect.stringMatching(/unknown tool/i),
    });
    expect(resultOf(session, "call_7").output).toStrictEqual({ city: "Oslo", sky: "clear" });
    expect(ran).toStrictEqual(["weather Oslo"]);
  });

  it("a paused program call of a loaded deferred tool resumes from a JSON copy with fresh tools", async () => {
    const model = scriptedModel([[search("s1")], [codeCall(weatherCode)]]);
    const paused = await agentLoop(model, makeTools([], { requireApproval: true }), initSession("s", "u"), {
      codeMode: true,
    });
    expect(pendingApprovals(paused).map((call) => call.id)).toStrictEqual(["call_7.1"]);
    const copy = JSON.parse(JSON.stringify(paused)) as Session;
    resolveApproval(copy, "call_7.1", { approved: true });
    const ran: string[] = [];
    const resumed = await agentLoop(scriptedModel([[answer]]), makeTools(ran, { requireApproval: true }), copy, {
      codeMode: true,
    });
    expect(resultOf(resumed, "call_7").output).toStrictEqual({ city: "Oslo", sky: "clear" });
    expect(ran).toStrictEqual(["weather Oslo"]);
    expectEveryCallAnsweredOnce(resumed);
  });

  it("follows the session in agentStream, in a handoff agent of runAgent and in a subagent", async () => {
    // agentStream
    const streamed = scriptedModel([[search("s1")], [codeCall(weatherCode)], [answer]]);
    const stream = agentStream(streamed, makeTools(), initSession("s", "u"), { codeMode: true });
    const streamedSession = await stream.result;
    expect(resultOf(streamedSession, "call_7").output).toStrictEqual({ city: "Oslo", sky: "clear" });
    expect(runCodeOf(streamed.toolsSeen[1]!).description).toContain("weather_forecast(input:");

    // A handoff agent with code mode: the agent handed to loads and calls the deferred tool.
    const ran: string[] = [];
    const handedModel = scriptedModel([
      [{ type: "tool_call", id: "h1", name: "transfer_to_forecaster", input: {} }],
      [search("s1")],
      [codeCall(weatherCode)],
      [answer],
    ]);
    const forecaster = defineAgent({
      name: "forecaster",
      systemPrompt: "Forecasts.",
      invokeModel: handedModel,
      tools: makeTools(ran),
      options: { codeMode: true },
    });
    const triage = defineAgent({
      name: "triage",
      systemPrompt: "Triage.",
      invokeModel: handedModel,
      handoffs: [forecaster],
    });
    const handed = await runAgent(triage, initSession("s", "u"));
    expect(resultOf(handed, "call_7").output).toStrictEqual({ city: "Oslo", sky: "clear" });
    expect(ran).toStrictEqual(["weather Oslo"]);

    // A subagent with code mode.
    const childRan: string[] = [];
    const child = scriptedModel([[search("s1")], [codeCall(weatherCode)], [{ role: "assistant", content: "clear" }]]);
    const sub = subagentTool({
      name: "forecast_agent",
      description: "Finds the forecast.",
      systemPrompt: "Forecasts.",
      invokeModel: child,
      tools: makeTools(childRan),
      loopOptions: { codeMode: true },
    });
    const parent = scriptedModel([
      [{ type: "tool_call", id: "p1", name: "forecast_agent", input: { prompt: "Oslo" } }],
      [answer],
    ]);
    await agentLoop(parent, [sub], initSession("s", "u"));
    expect(runCodeOf(child.toolsSeen[1]!).description).toContain("weather_forecast(input:");
    expect(childRan).toStrictEqual(["weather Oslo"]);
  });
});
