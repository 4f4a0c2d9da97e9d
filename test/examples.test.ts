// The examples in examples/, run offline: every model is scripted (by the agent name the loop
// passes in the model context), every answer that depends on its input is a function of the
// session, and the checks are about control flow: which subagents ran, with what, in parallel or
// not, and why the coordinator stopped.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  MaxIterationsError,
  type InvokeModel,
  type Message,
  type ModelMessage,
  type Session,
  type ToolCallMessage,
  type ToolResultMessage,
} from "simple-agent-loop";
import { scriptedModel, type ScriptedModel, type ScriptedTurn } from "simple-agent-loop/testing";
import { helloWorld } from "../examples/hello-world.ts";
import { weatherAgent, type Fetch } from "../examples/weather.ts";
import { compressor, DIMINISHING_RATIO } from "../examples/compressor.ts";
import { deriveTransform, PASSING_SCORE, scoreOf } from "../examples/derive-transform.ts";
import { triageExample } from "../examples/triage.ts";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const run = promisify(execFile);

afterEach(() => {
  vi.unstubAllGlobals();
});

// --- helpers ---------------------------------------------------------------------------------

/** One invokeModel that hands each call to the model of the agent making it; counts concurrency. */
function routed(models: Record<string, InvokeModel>) {
  const inFlight: Record<string, number> = {};
  const maxInFlight: Record<string, number> = {};
  const order: string[] = [];
  let judgesInFlight = 0;
  let maxJudgesInFlight = 0;
  const invoke: InvokeModel = async (tools, session, context) => {
    const agent = context.agentName ?? "(unnamed)";
    const model = models[agent];
    if (model === undefined) throw new Error(`no model scripted for agent ${agent}`);
    order.push(agent);
    const isJudge = agent.startsWith("judge_");
    inFlight[agent] = (inFlight[agent] ?? 0) + 1;
    maxInFlight[agent] = Math.max(maxInFlight[agent] ?? 0, inFlight[agent]);
    if (isJudge) maxJudgesInFlight = Math.max(maxJudgesInFlight, ++judgesInFlight);
    try {
      return await (model(tools, session, context) as ModelMessage[] | Promise<ModelMessage[]>);
    } finally {
      inFlight[agent]--;
      if (isJudge) judgesInFlight--;
    }
  };
  return { invoke, order, maxInFlight, maxJudgesInFlight: () => maxJudgesInFlight };
}

/** The same turn function, enough times for any run here (a scripted model throws past its end). */
function repeat(turn: (session: Session) => ModelMessage[], times = 20, delay?: number): ScriptedModel {
  const turns: ScriptedTurn[] = Array.from({ length: times }, () =>
    delay === undefined ? turn : { delay, messages: turn },
  );
  return scriptedModel(turns);
}

const userText = (session: Session): string =>
  (session.messages.find((message) => "role" in message && message.role === "user") as { content: string }).content;
const isCall = (message: Message): message is ToolCallMessage => "type" in message && message.type === "tool_call";
const isResult = (message: Message): message is ToolResultMessage =>
  "type" in message && message.type === "tool_result";
const toolCalls = (session: Session): ToolCallMessage[] => session.messages.filter(isCall);
const resultOf = (session: Session, id: string): string => {
  const output = session.messages.filter(isResult).find((message) => message.id === id)?.output;
  return typeof output === "string" ? output : JSON.stringify(output);
};
let ids = 0;
const call = (name: string, input: Record<string, string>): ToolCallMessage => ({
  type: "tool_call",
  id: `call_${++ids}`,
  name,
  input,
});
const say = (content: string): ModelMessage[] => [{ role: "assistant", content }];
const words = (text: string): string[] => text.split(/\s+/).filter((word) => word.length > 0);

// --- hello world -----------------------------------------------------------------------------

describe("examples/hello-world.ts", () => {
  it("one model call, no tools offered, the answer is the model's text", async () => {
    const model = scriptedModel([say("Hello! Bonjour! Hola!")]);
    const { answer, session } = await helloWorld(model);
    expect(answer).toBe("Hello! Bonjour! Hola!");
    expect(model.callCount).toBe(1);
    expect(model.toolsSeen).toStrictEqual([[]]);
    expect(session.messages.map((message) => ("role" in message ? message.role : message.type))).toStrictEqual([
      "system",
      "user",
      "assistant",
    ]);
    expect(userText(session)).toBe("Say hello in three languages.");
  });

  it("runs with maxIterations 1: a model that wants another turn stops with MaxIterationsError after one call", async () => {
    const model = scriptedModel([[call("greet", {})], say("never reached")]);
    await expect(helloWorld(model)).rejects.toBeInstanceOf(MaxIterationsError);
    expect(model.callCount).toBe(1);
  });

  it("run directly with no API keys in the environment: says what to set and exits 1", async () => {
    const environment = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !/^(ANTHROPIC|OPENAI)_/.test(name)),
    );
    const child = run(process.execPath, ["--conditions=simple-agent-loop-source", "examples/hello-world.ts"], {
      cwd: root,
      env: environment,
    });
    const failure = await child.then(
      () => undefined,
      (error: unknown) => error as { code?: number; stdout: string; stderr: string },
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain("No model configured: set ANTHROPIC_API_KEY");
    expect(failure?.stderr).toContain("OPENAI_API_KEY or OPENAI_BASE_URL");
    expect(failure?.stdout).toBe("");
  });
});

// --- weather ---------------------------------------------------------------------------------

describe("examples/weather.ts", () => {
  it("two cities: two get_weather calls in one response run in parallel through the injected fetch, no network", async () => {
    vi.stubGlobal("fetch", () => Promise.reject(new Error("network used")));
    const conditions: Record<string, { temp_C: string; weatherDesc: { value: string }[] }> = {
      Tokyo: { temp_C: "18", weatherDesc: [{ value: "Clear" }] },
      Paris: { temp_C: "11", weatherDesc: [{ value: "Light rain" }] },
    };
    const urls: string[] = [];
    const signals: unknown[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const fakeFetch: Fetch = async (url, { signal }) => {
      urls.push(url);
      signals.push(signal);
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 50));
      inFlight--;
      const city = decodeURIComponent(/wttr\.in\/([^?]+)\?format=j1$/.exec(url)?.[1] ?? "");
      return { ok: true, status: 200, json: async () => ({ current_condition: [conditions[city]] }) };
    };
    const model = scriptedModel([
      [call("get_weather", { city: "Tokyo" }), call("get_weather", { city: "Paris" })],
      (session) => {
        const reports = session.messages
          .filter(isResult)
          .map((result) => result.output as { city: string; temp_c: string; description: string });
        return say(reports.map((report) => `${report.city}: ${report.temp_c}°C, ${report.description}`).join("; "));
      },
    ]);

    const { answer, session } = await weatherAgent(model, { fetch: fakeFetch });

    expect(model.toolsSeen[0]?.map((tool) => tool.name)).toStrictEqual(["get_weather"]);
    expect(userText(session)).toBe("What's the weather in Tokyo and Paris?");
    expect(urls.sort()).toStrictEqual(["https://wttr.in/Paris?format=j1", "https://wttr.in/Tokyo?format=j1"]);
    expect(maxInFlight).toBe(2);
    expect(signals.every((signal) => signal instanceof AbortSignal)).toBe(true);
    // Results in call order, as the example's handler shapes them.
    expect(session.messages.filter(isResult).map((result) => result.output)).toStrictEqual([
      { city: "Tokyo", temp_c: "18", description: "Clear" },
      { city: "Paris", temp_c: "11", description: "Light rain" },
    ]);
    expect(answer).toBe("Tokyo: 18°C, Clear; Paris: 11°C, Light rain");
    expect(model.callCount).toBe(2);
    expectEveryCallAnsweredOnce(session);
  });

  it("a failing fetch becomes an error result the model sees, not a crash", async () => {
    const fakeFetch: Fetch = async () => ({ ok: false, status: 503, json: async () => ({}) });
    const model = scriptedModel([
      [call("get_weather", { city: "Atlantis" })],
      (session) => say(`sorry: ${resultOf(session, toolCalls(session)[0]!.id)}`),
    ]);
    const { answer, session } = await weatherAgent(model, { fetch: fakeFetch });
    expect(session.messages.filter(isResult)[0]?.isError).toBe(true);
    expect(answer).toContain("wttr.in answered 503 for Atlantis");
  });
});

// --- compressor ------------------------------------------------------------------------------

/**
 * The coordinator as a policy over the session, following its system prompt: shorten, judge with
 * the original, stop on too_lossy (keeping the previous text) or a ratio above DIMINISHING_RATIO.
 */
function compressorCoordinator(session: Session): ModelMessage[] {
  const original = userText(session);
  const calls = toolCalls(session);
  const last = calls.at(-1);
  if (last === undefined) return [call("shorten", { text: original })];
  const shortenCalls = calls.filter((message) => message.name === "shorten");
  const shortened = (index: number) =>
    JSON.parse(resultOf(session, shortenCalls[index]!.id)) as { compression_ratio: number; shortened_text: string };
  const latest = shortened(shortenCalls.length - 1);
  if (last.name === "shorten") return [call("judge", { original, shortened: latest.shortened_text })];
  const verdict = (JSON.parse(resultOf(session, last.id)) as { verdict: string }).verdict;
  if (verdict === "too_lossy") {
    const previous = shortenCalls.length > 1 ? shortened(shortenCalls.length - 2).shortened_text : original;
    return say(`STOPPED: too_lossy\n${previous}`);
  }
  if (latest.compression_ratio > DIMINISHING_RATIO)
    return say(`STOPPED: diminishing_returns\n${latest.shortened_text}`);
  return [call("shorten", { text: latest.shortened_text })];
}

const sixteenWords = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen";

describe("examples/compressor.ts", () => {
  it("loops shorten → judge until the judge says too_lossy, and keeps the last acceptable text", async () => {
    const shortener = repeat((session) => {
      const text = words(userText(session));
      return say(text.slice(0, Math.ceil(text.length / 2)).join(" "));
    });
    const judge = repeat((session) => {
      const shortenedPart = userText(session).split("SHORTENED:\n")[1] ?? "";
      return say(
        JSON.stringify(
          words(shortenedPart).length < 5
            ? { verdict: "too_lossy", reason: "lost items" }
            : { verdict: "acceptable", reason: "ok" },
        ),
      );
    });
    const coordinator = repeat(compressorCoordinator);
    const router = routed({ coordinator, shortener, judge });

    const result = await compressor(router.invoke, sixteenWords);

    expect(result.calls.map((entry) => entry.agent)).toStrictEqual(["shorten", "judge", "shorten", "judge"]);
    expect(result.stoppedBecause).toBe("too_lossy");
    expect(result.text).toBe("one two three four five six seven eight");
    // Each round shortens the previous round's text; the judge always compares with the original.
    expect(result.calls[2]?.input.text).toBe("one two three four five six seven eight");
    expect(result.calls.filter((entry) => entry.agent === "judge").map((entry) => entry.input.original)).toStrictEqual([
      sixteenWords,
      sixteenWords,
    ]);
    // The example computes the ratio from the lengths.
    const firstRatio = (JSON.parse(result.calls[0]!.output) as { compression_ratio: number }).compression_ratio;
    expect(firstRatio).toBeCloseTo("one two three four five six seven eight".length / sixteenWords.length, 3);
    // The subagents are one-shot loops without tools: one model call each, a fresh two-message session.
    for (const model of [shortener, judge]) {
      expect(model.callCount).toBe(2);
      expect(model.toolsSeen.every((tools) => tools.length === 0)).toBe(true);
      expect(model.calls.every((session) => session.messages.length === 2)).toBe(true);
    }
    expect(coordinator.toolsSeen[0]?.map((tool) => tool.name)).toStrictEqual(["shorten", "judge"]);
    expect(router.order).toStrictEqual([
      "coordinator",
      "shortener",
      "coordinator",
      "judge",
      "coordinator",
      "shortener",
      "coordinator",
      "judge",
      "coordinator",
    ]);
    expectEveryCallAnsweredOnce(result.session);
  });

  it("stops on diminishing returns when a round barely shortens the text, although the judge accepts it", async () => {
    let round = 0;
    const shortener = repeat((session) => {
      const text = words(userText(session));
      round++;
      // First round halves the text; the second only abbreviates the first word (ratio above 0.9).
      return say((round === 1 ? text.slice(0, text.length / 2) : [text[0]!.slice(0, 1), ...text.slice(1)]).join(" "));
    });
    const judge = repeat(() => say('{"verdict": "acceptable", "reason": "meaning kept"}'));
    const coordinator = repeat(compressorCoordinator);

    const result = await compressor(routed({ coordinator, shortener, judge }).invoke, sixteenWords);

    expect(result.calls.map((entry) => entry.agent)).toStrictEqual(["shorten", "judge", "shorten", "judge"]);
    expect(result.stoppedBecause).toBe("diminishing_returns");
    expect(result.text).toBe("o two three four five six seven eight");
    const ratios = result.calls
      .filter((entry) => entry.agent === "shorten")
      .map((entry) => (JSON.parse(entry.output) as { compression_ratio: number }).compression_ratio);
    expect(ratios[0]).toBeLessThan(DIMINISHING_RATIO);
    expect(ratios[1]).toBeGreaterThan(DIMINISHING_RATIO);
  });
});

// --- derive-transform ------------------------------------------------------------------------

const SOURCE = "Notes: Ana sends the budget. Ben books the venue.";
const TARGET = "- Ana: send the budget\n- Ben: book the venue";
const JUDGES = ["judge_similarity", "judge_generality", "judge_specific_info"] as const;

/** The coordinator as a policy: edit, then all three judges in one response; stop when all score above PASSING_SCORE. */
function deriveCoordinator(session: Session): ModelMessage[] {
  const calls = toolCalls(session);
  const last = calls.at(-1);
  const source = /SOURCE:\n([\s\S]*?)\n\nTARGET:/.exec(userText(session))?.[1] ?? "";
  const target = /TARGET:\n([\s\S]*)$/.exec(userText(session))?.[1] ?? "";
  const attempts = [
    { rules: "Turn each sentence into a bullet 'name: task' for Ana and Ben.", specific_info: "- people: Ana, Ben" },
    {
      rules: "Turn each sentence into a bullet 'person: task' in the imperative.",
      specific_info: "- people: Ana, Ben",
    },
  ];
  const edits = calls.filter((message) => message.name === "edit");
  if (last === undefined) return [call("edit", { text: source, ...attempts[0]! })];
  const current = edits.at(-1)!.input as { rules: string; specific_info: string };
  if (last.name === "edit") {
    const output = resultOf(session, last.id);
    return [
      call("judge_similarity", { editor_output: output, target }),
      call("judge_generality", { rules: current.rules }),
      call("judge_specific_info", { specific_info: current.specific_info }),
    ];
  }
  const scores = calls.slice(-3).map((message) => scoreOf(resultOf(session, message.id)) ?? 0);
  if (scores.every((score) => score > PASSING_SCORE))
    return say(`RULES:\n${current.rules}\n\nSPECIFIC INFO:\n${current.specific_info}`);
  return [call("edit", { text: source, ...attempts[edits.length]! })];
}

describe("examples/derive-transform.ts", () => {
  it("edit, then the three judges in parallel; refines while any score is at most 90 and stops when all are above", async () => {
    const edit = repeat((session) => (userText(session).includes("bullet") ? say(TARGET) : say(SOURCE)));
    const judgeDelay = 60;
    const judges = {
      judge_similarity: repeat(
        (session) =>
          say(
            JSON.stringify({
              score: userText(session).includes(`EDITOR OUTPUT:\n${TARGET}\n\n`) ? 98 : 30,
              differences: "",
            }),
          ),
        20,
        judgeDelay,
      ),
      // Names of these particular texts in the rules make them less general.
      judge_generality: repeat(
        (session) =>
          say(
            JSON.stringify({ score: /Ana|Ben/.test(userText(session)) ? 55 : 95, differences: "names in the rules" }),
          ),
        20,
        judgeDelay,
      ),
      judge_specific_info: repeat(() => say('Here you go: {"score": 93, "differences": "none"}'), 20, judgeDelay),
    };
    const coordinator = repeat(deriveCoordinator);
    const router = routed({ coordinator, edit, ...judges });

    const result = await deriveTransform(router.invoke, SOURCE, TARGET);

    expect(result.calls.map((entry) => entry.agent).filter((agent) => agent === "edit")).toHaveLength(2);
    // Two rounds: edit, then the three judges (completion order may vary inside a round).
    const rounds = [result.calls.slice(0, 4), result.calls.slice(4, 8)];
    expect(result.calls).toHaveLength(8);
    for (const roundCalls of rounds) {
      expect(roundCalls[0]?.agent).toBe("edit");
      expect(
        roundCalls
          .slice(1)
          .map((entry) => entry.agent)
          .sort(),
      ).toStrictEqual([...JUDGES].sort());
      // The judges ran in parallel: each started before any of them ended.
      const judged = roundCalls.slice(1);
      expect(Math.max(...judged.map((entry) => entry.startedAt))).toBeLessThan(
        Math.min(...judged.map((entry) => entry.endedAt)),
      );
    }
    expect(router.maxJudgesInFlight()).toBe(3);
    const scores = rounds.map((roundCalls) => roundCalls.slice(1).map((entry) => scoreOf(entry.output)));
    expect(Math.min(...(scores[0] as number[]))).toBeLessThanOrEqual(PASSING_SCORE);
    expect((scores[1] as number[]).every((score) => score > PASSING_SCORE)).toBe(true);
    // One coordinator response held all three judge calls; it stopped after the second round.
    expect(coordinator.callCount).toBe(5);
    expect(coordinator.calls[1]?.messages.filter(isCall)).toHaveLength(1);
    expect(
      coordinator.calls[2]?.messages
        .filter(isCall)
        .slice(1)
        .map((message) => message.name),
    ).toStrictEqual([...JUDGES]);
    expect(result.answer).toBe(
      "RULES:\nTurn each sentence into a bullet 'person: task' in the imperative.\n\nSPECIFIC INFO:\n- people: Ana, Ben",
    );
    // Each subagent got its own inputs: the editor the source, rules and info; the judges theirs.
    expect(result.calls[0]?.input).toMatchObject({ text: SOURCE, specific_info: "- people: Ana, Ben" });
    expect(rounds[1]?.find((entry) => entry.agent === "judge_similarity")?.input).toStrictEqual({
      editor_output: TARGET,
      target: TARGET,
    });
    for (const model of [edit, ...Object.values(judges)]) {
      expect(model.toolsSeen.every((tools) => tools.length === 0)).toBe(true);
      expect(model.calls.every((session) => session.messages.length === 2)).toBe(true);
    }
    expectEveryCallAnsweredOnce(result.session);
  });

  it("scoreOf reads the score from a judge's JSON, even with text around it", () => {
    expect(scoreOf('{"score": 91, "differences": ""}')).toBe(91);
    expect(scoreOf('Sure. {"score": 42}')).toBe(42);
    expect(scoreOf("no json")).toBeUndefined();
  });
});

// --- triage ----------------------------------------------------------------------------------

describe("examples/triage.ts", () => {
  it("triage hands a billing question to billing, which answers from its tool with its own system prompt", async () => {
    const prompts: string[] = [];
    const names: (string | undefined)[] = [];
    const turn =
      (reply: (session: Session) => ModelMessage[]) =>
      (session: Session, context: { agentName?: string }): ModelMessage[] => {
        prompts.push((session.messages[0] as { content: string }).content);
        names.push(context.agentName);
        return reply(session);
      };
    const model = scriptedModel([
      turn(() => [call("transfer_to_billing", {})]),
      turn(() => [call("latest_invoice", {})]),
      turn((session) => say(`Invoice ${JSON.parse(resultOf(session, `call_${ids}`)).number as string} is paid.`)),
    ]);
    const { answer, session } = await triageExample(model, "Was my last invoice paid?");
    expect(answer).toBe("Invoice INV-1042 is paid.");
    expect(names).toStrictEqual(["triage", "billing", "billing"]);
    expect(prompts[0]).toContain("front desk");
    expect(prompts[1]).toContain("billing specialist");
    expect(model.toolsSeen[0]?.map((tool) => tool.name)).toStrictEqual(["transfer_to_billing", "transfer_to_refunds"]);
    expect(model.toolsSeen[1]?.map((tool) => tool.name)).toStrictEqual(["latest_invoice"]);
    expectEveryCallAnsweredOnce(session);
  });

  it("its input guardrail takes a card number out of the question before any model sees it", async () => {
    const model = scriptedModel([[call("transfer_to_refunds", {})], say("Your refund is on its way.")]);
    const { answer, session } = await triageExample(model, "Refund the charge on 4111 1111 1111 1111 please");
    expect(answer).toBe("Your refund is on its way.");
    const asked = model.calls.map((sent) =>
      sent.messages.find((message) => "role" in message && message.role === "user"),
    );
    expect(asked.map((message) => message !== undefined && "content" in message && message.content)).toStrictEqual([
      "Refund the charge on [card] please",
      "Refund the charge on [card] please",
    ]);
    expect(JSON.stringify(session)).not.toContain("4111");
    expect(session.messages[1]).toMatchObject({ guardrail: { name: "card-numbers", action: "redact" } });
  });
});
