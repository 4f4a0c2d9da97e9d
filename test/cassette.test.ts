import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  agentLoop,
  agentStream,
  initSession,
  isProviderError,
  ProviderError,
  subagentTool,
  tool,
  type AgentEvent,
  type ApprovalPolicy,
  type InvokeModel,
} from "simple-agent-loop";
import {
  assertCassetteUsed,
  cassette,
  isCassetteMismatchError,
  isCassetteSecretError,
  scriptedModel,
  scriptedModelFromCassette,
  useCassette,
  type CassetteEntry,
} from "simple-agent-loop/testing";
import { isRaisedBeforeSending } from "simple-agent-loop";
import { anthropic } from "simple-agent-loop/anthropic";
import { bedrock } from "simple-agent-loop/bedrock";
import { gemini } from "simple-agent-loop/google";
import { openaiChat, openaiResponses } from "simple-agent-loop/openai";
import { runCli } from "../src/cli/cli.ts";
import { withoutTs } from "./helpers.ts";

const directory = (): string => mkdtempSync(join(tmpdir(), "sal-cassette-"));

// A model that must not be reached: replay answers from the file alone.
const unreachable: InvokeModel = () => {
  throw new Error("the live model was called during replay");
};

const lookup = tool({
  name: "lookup",
  description: "Look a word up.",
  inputSchema: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
  handler: (input) => `definition of ${String(input.word)}`,
});

const twoTurns = (stream = false) =>
  scriptedModel(
    [
      [{ type: "tool_call", id: "call_1", name: "lookup", input: { word: "tape" } }],
      [{ role: "assistant", content: "Tape is a strip." }],
    ],
    { stream },
  );

const lines = (path: string): CassetteEntry[] =>
  readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as CassetteEntry);

const savedEnvironment = { CI: process.env.CI, SAL_CASSETTE_MODE: process.env.SAL_CASSETTE_MODE };
afterEach(() => {
  for (const [key, value] of Object.entries(savedEnvironment)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

describe("cassette: record once, replay offline", () => {
  it("records one JSONL entry per model call and replays the same session without calling the model", async () => {
    delete process.env.CI;
    const path = join(directory(), "run.jsonl");
    const recording = cassette(twoTurns(), { path });
    expect(recording.cassetteMode).toBe("record");
    const recorded = await agentLoop(recording, [lookup], initSession("s", "define tape"));
    const entries = lines(path);
    expect(entries.map((entry) => entry.kind === "model" && entry.call)).toStrictEqual([1, 2]);
    // The request is the model's view without clock readings.
    expect(JSON.stringify(entries[0])).not.toContain('"ts"');
    const replaying = cassette(unreachable, { path });
    expect(replaying.cassetteMode).toBe("replay");
    const replayed = await agentLoop(replaying, [lookup], initSession("s", "define tape"));
    expect(withoutTs(replayed)).toStrictEqual(withoutTs(recorded));
    assertCassetteUsed(replaying);
  });

  it("a run under an approval policy replays: the time each call was approved is not compared", async () => {
    const path = join(directory(), "policy.jsonl");
    const approvalPolicy: ApprovalPolicy = { rules: [{ id: "lookups", tool: "lookup", action: "allow" }] };
    await agentLoop(cassette(twoTurns(), { path, mode: "record" }), [lookup], initSession("s", "define tape"), {
      approvalPolicy,
    });
    expect(JSON.stringify(lines(path)[1])).not.toContain('"at"');
    // A later clock: the decision is the same, its time is not.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const replayed = await agentLoop(
      cassette(unreachable, { path, mode: "replay" }),
      [lookup],
      initSession("s", "define tape"),
      { approvalPolicy },
    );
    expect(replayed.messages.at(-1)).toMatchObject({ role: "assistant", content: "Tape is a strip." });
    expect(replayed.messages[2]).toMatchObject({ approval: { decidedBy: { by: "rule", rule: "lookups" } } });
  });

  it("replays a stream's events as they came, and with pace recorded keeps their timing", async () => {
    const path = join(directory(), "stream.jsonl");
    const slow = scriptedModel([{ messages: [{ role: "assistant", content: "slow words here" }], delay: 120 }], {
      stream: true,
    });
    const deltas = async (model: InvokeModel): Promise<string[]> => {
      const seen: string[] = [];
      for await (const event of agentStream(model, [], initSession("s", "talk"))) {
        if (event.type === "text-delta") seen.push(event.delta);
      }
      return seen;
    };
    const live = await deltas(cassette(slow, { path, mode: "record" }));
    expect(live.join("")).toBe("slow words here");
    const recordedMs = (lines(path)[0] as Extract<CassetteEntry, { kind: "model" }>).answer.ms;
    expect(recordedMs).toBeGreaterThanOrEqual(100);
    expect(await deltas(cassette(unreachable, { path, mode: "replay" }))).toStrictEqual(live);
    const started = performance.now();
    expect(await deltas(cassette(unreachable, { path, mode: "replay", pace: "recorded" }))).toStrictEqual(live);
    expect(performance.now() - started).toBeGreaterThanOrEqual(recordedMs - 5);
  });

  it("a changed prompt is a CassetteMismatchError naming the call, the path and both values", async () => {
    const path = join(directory(), "run.jsonl");
    await agentLoop(cassette(twoTurns(), { path, mode: "record" }), [lookup], initSession("s", "define tape"));
    const error = await agentLoop(
      cassette(unreachable, { path, mode: "replay" }),
      [lookup],
      initSession("s", "define tap"),
    ).catch((caught: unknown) => caught);
    expect(isCassetteMismatchError(error)).toBe(true);
    expect((error as Error).message).toContain(
      'model call 1 differs from the recording at messages[1].content: recorded "define tape", now "define tap"',
    );
    expect(error).toMatchObject({ call: 1, path: "messages[1].content", recorded: "define tape", now: "define tap" });
  });

  it("a second call that differs is named as call 2; more calls than recorded are refused", async () => {
    const path = join(directory(), "run.jsonl");
    await agentLoop(cassette(twoTurns(), { path, mode: "record" }), [lookup], initSession("s", "define tape"));
    const otherTool = tool({ ...lookup, handler: () => "another definition" });
    const error = await agentLoop(
      cassette(unreachable, { path, mode: "replay" }),
      [otherTool],
      initSession("s", "define tape"),
    ).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: "CassetteMismatchError", call: 2, path: "messages[3].output" });
    const session = initSession("s", "define tape");
    await agentLoop(cassette(unreachable, { path, mode: "replay" }), [lookup], session);
    session.messages.push({ role: "user", content: "and again" });
    await expect(agentLoop(cassette(unreachable, { path, mode: "replay" }), [lookup], session)).rejects.toThrow(
      /model call 1 differs|was not recorded/,
    );
  });

  it("assertCassetteUsed throws when recorded calls were left unused", async () => {
    const path = join(directory(), "run.jsonl");
    await agentLoop(cassette(twoTurns(), { path, mode: "record" }), [lookup], initSession("s", "define tape"));
    const first = lines(path)[0]!;
    writeFileSync(path, `${JSON.stringify(first)}\n${JSON.stringify(first)}\n`);
    const model = cassette(
      scriptedModel([[{ type: "tool_call", id: "call_1", name: "lookup", input: { word: "tape" } }]]),
      { path, mode: "replay" },
    );
    // Only the first entry matches a request of this run's first call; the run stops after its tool.
    await agentLoop(model, [lookup], initSession("s", "define tape"), { maxIterations: 1 }).catch(() => undefined);
    expect(() => assertCassetteUsed(model)).toThrow(/1 recorded entry was not used: model call 1/);
  });

  it("update replays the calls before the first change and re-records from there", async () => {
    const path = join(directory(), "run.jsonl");
    await agentLoop(cassette(twoTurns(), { path, mode: "record" }), [lookup], initSession("s", "define tape"));
    const newer = tool({ ...lookup, handler: () => "a newer definition" });
    const live = scriptedModel([[{ role: "assistant", content: "Updated answer." }]]);
    const updated = await agentLoop(cassette(live, { path, mode: "update" }), [newer], initSession("s", "define tape"));
    expect(live.callCount).toBe(1); // the first call was replayed, not sent
    expect(updated.messages.at(-1)).toMatchObject({ content: "Updated answer." });
    const entries = lines(path);
    expect(entries).toHaveLength(2);
    expect(JSON.stringify(entries[1])).toContain("a newer definition");
    const again = await agentLoop(
      cassette(unreachable, { path, mode: "replay" }),
      [newer],
      initSession("s", "define tape"),
    );
    expect(withoutTs(again)).toStrictEqual(withoutTs(updated));
  });

  it("a failed attempt is an entry of its own: the error and the retry replay too", async () => {
    const path = join(directory(), "run.jsonl");
    const flaky = scriptedModel([
      { error: new ProviderError("Overloaded", { provider: "test", status: 529, retryable: true, retryAfterMs: 0 }) },
      [{ role: "assistant", content: "Fine now." }],
    ]);
    const events: AgentEvent[] = [];
    await agentLoop(cassette(flaky, { path, mode: "record" }), [], initSession("s", "hi"), {
      retry: { maxRetries: 1 },
    });
    const entries = lines(path);
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({
      answer: { type: "error", error: { name: "ProviderError", status: 529, retryable: true } },
    });
    const session = await agentLoop(cassette(unreachable, { path, mode: "replay" }), [], initSession("s", "hi"), {
      retry: { maxRetries: 1 },
      onEvent: (event) => events.push(event),
    });
    expect(session.messages.at(-1)).toMatchObject({ content: "Fine now." });
    const retried = events.find((event) => event.type === "retry") as { error?: unknown } | undefined;
    expect(retried).toBeDefined();
    // Without retries the replayed failure is the provider's typed error.
    const error = await agentLoop(cassette(unreachable, { path, mode: "replay" }), [], initSession("s", "hi"), {
      retry: false,
    }).catch((caught: unknown) => caught);
    expect(isProviderError(error)).toBe(true);
    expect(error).toMatchObject({ status: 529, retryable: true });
  });
});

describe("cassette: an error raised before anything was sent is not a recording", () => {
  const keys = [
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
  ];
  const saved = new Map(keys.map((name) => [name, process.env[name]]));
  afterEach(() => {
    for (const [name, value] of saved)
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  });
  const adapters: [string, () => InvokeModel][] = [
    ["anthropic", () => anthropic({ model: "claude-sonnet-4-5", fetch: answering })],
    ["openaiChat", () => openaiChat({ model: "gpt-5", fetch: answering })],
    ["openaiResponses", () => openaiResponses({ model: "gpt-5", fetch: answering })],
    ["gemini", () => gemini({ model: "gemini-2.5-flash", fetch: answering })],
    ["bedrock", () => bedrock({ model: "anthropic.claude", region: "us-east-1", fetch: answering })],
  ];
  // Nothing may be sent in this test: a request is a failure of its own.
  const answering = (): Promise<Response> => Promise.reject(new Error("a request was sent"));

  for (const [name, make] of adapters) {
    it(`${name} without a key: the error is thrown, nothing is recorded, and the next run records afresh`, async () => {
      // A local run (CI set, auto mode refuses to record at all; that case has its own test).
      delete process.env.CI;
      for (const key of keys) delete process.env[key];
      const path = join(directory(), "greeting.jsonl");
      const error = await agentLoop(cassette(make(), { path }), [], initSession("s", "hi")).catch(
        (caught: unknown) => caught,
      );
      expect(String(error)).toMatch(/key|credentials/i);
      expect(isRaisedBeforeSending(error)).toBe(true);
      expect(existsSync(path) ? readFileSync(path, "utf8") : "").toBe("");
      // The next run (a key set) calls the model instead of replaying the missing key.
      const model = scriptedModel([[{ role: "assistant", content: "Hello." }]]);
      const session = await agentLoop(cassette(model, { path }), [], initSession("s", "hi"));
      expect(session.messages.at(-1)).toMatchObject({ content: "Hello." });
      expect(model.callCount).toBe(1);
    });
  }

  it("an error a model gives (a provider's answer, a hand-written model's throw) is still recorded", async () => {
    delete process.env.CI;
    const path = join(directory(), "failed.jsonl");
    const failing: InvokeModel = () => {
      throw new ProviderError("Overloaded", { provider: "test", status: 529 });
    };
    await agentLoop(cassette(failing, { path }), [], initSession("s", "hi"), { retry: false }).catch(() => undefined);
    expect(lines(path)).toMatchObject([{ answer: { type: "error", error: { status: 529 } } }]);
  });
});

describe("cassette: secrets, CI and modes", () => {
  it("refuses to write a key-shaped value, names where without repeating it, and writes nothing", async () => {
    const path = join(directory(), "run.jsonl");
    const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";
    const error = await agentLoop(
      cassette(twoTurns(), { path, mode: "record" }),
      [lookup],
      initSession("s", `my key is ${key}`),
    ).catch((caught: unknown) => caught);
    expect(isCassetteSecretError(error)).toBe(true);
    expect((error as Error).message).toContain("messages[1].content");
    expect((error as Error).message).not.toContain(key);
    expect(existsSync(path)).toBe(false);
  });

  it("a key in the model's answer is refused too; redact returns the entry to write, and replay compares through it", async () => {
    const path = join(directory(), "run.jsonl");
    const leaky = scriptedModel([[{ role: "assistant", content: "Use AKIAABCDEFGHIJKLMNOP for it." }]]);
    await expect(agentLoop(cassette(leaky, { path, mode: "record" }), [], initSession("s", "hi"))).rejects.toThrow(
      /an AWS access key id found at call 1/,
    );
    expect(existsSync(path)).toBe(false);
    const redact = (entry: CassetteEntry): CassetteEntry =>
      JSON.parse(
        JSON.stringify(entry).replaceAll("AKIAABCDEFGHIJKLMNOP", "[aws key]").replaceAll("ticket 4411", "ticket N"),
      ) as CassetteEntry;
    const answer = scriptedModel([[{ role: "assistant", content: "Use AKIAABCDEFGHIJKLMNOP for it." }]]);
    await agentLoop(cassette(answer, { path, mode: "record", redact }), [], initSession("s", "about ticket 4411"));
    expect(readFileSync(path, "utf8")).not.toContain("AKIA");
    // The live request says another ticket number, which redact makes the same as the recorded one.
    const session = await agentLoop(
      cassette(unreachable, { path, mode: "replay", redact }),
      [],
      initSession("s", "about ticket 4411"),
    );
    expect(session.messages.at(-1)).toMatchObject({ content: "Use [aws key] for it." });
  });

  it("with CI set, auto never records: a missing cassette is an error and no file is made", async () => {
    process.env.CI = "true";
    const path = join(directory(), "missing.jsonl");
    expect(() => cassette(twoTurns(), { path })).toThrow(/CI is set/);
    expect(existsSync(path)).toBe(false);
  });

  it("SAL_CASSETTE_MODE wins over the mode option", async () => {
    process.env.SAL_CASSETTE_MODE = "live";
    const path = join(directory(), "run.jsonl");
    const model = cassette(twoTurns(), { path, mode: "replay" });
    expect(model.cassetteMode).toBe("live");
    await agentLoop(model, [lookup], initSession("s", "define tape"));
    expect(existsSync(path)).toBe(false);
    process.env.SAL_CASSETTE_MODE = "sideways";
    expect(() => cassette(twoTurns(), { path })).toThrow(/SAL_CASSETTE_MODE must be one of/);
  });
});

describe("cassette: tools, subagents, scripted models", () => {
  it("tools: record keeps each tool result; replay returns it without running the handler", async () => {
    const path = join(directory(), "run.jsonl");
    let runs = 0;
    const sideEffect = tool({
      ...lookup,
      handler: (input) => {
        runs += 1;
        return `looked up ${String(input.word)} (${runs})`;
      },
    });
    const recorded = await agentLoop(
      cassette(twoTurns(), { path, mode: "record", tools: "record" }),
      [sideEffect],
      initSession("s", "define tape"),
    );
    expect(runs).toBe(1);
    expect(lines(path).map((entry) => entry.kind)).toStrictEqual(["model", "tool", "model"]);
    const replaying = cassette(unreachable, { path, mode: "replay", tools: "record" });
    const replayed = await agentLoop(replaying, [sideEffect], initSession("s", "define tape"));
    expect(runs).toBe(1);
    expect(withoutTs(replayed)).toStrictEqual(withoutTs(recorded));
    assertCassetteUsed(replaying);
  });

  it("a subagent's calls are entries of the same file, marked with its name, in the order they happened", async () => {
    const path = join(directory(), "run.jsonl");
    const script = scriptedModel([
      [{ type: "tool_call", id: "call_sub", name: "helper", input: { prompt: "summarize" } }],
      [{ role: "assistant", content: "summary" }],
      [{ role: "assistant", content: "The helper said: summary" }],
    ]);
    const build = (model: InvokeModel) => [
      subagentTool({ name: "helper", description: "Helps.", invokeModel: model, systemPrompt: "Help." }),
    ];
    const model = cassette(script, { path, mode: "record" });
    const recorded = await agentLoop(model, build(model), initSession("s", "go"));
    const entries = lines(path) as Extract<CassetteEntry, { kind: "model" }>[];
    expect(entries.map((entry) => entry.agent)).toStrictEqual([undefined, "helper", undefined]);
    const replaying = cassette(unreachable, { path, mode: "replay" });
    const replayed = await agentLoop(replaying, build(replaying), initSession("s", "go"));
    expect(withoutTs(replayed)).toStrictEqual(withoutTs(recorded));
  });

  it("scriptedModelFromCassette turns a recording into a scripted model whose requests are not checked", async () => {
    const path = join(directory(), "run.jsonl");
    await agentLoop(cassette(twoTurns(true), { path, mode: "record" }), [lookup], initSession("s", "define tape"));
    const scripted = await scriptedModelFromCassette(path);
    const session = await agentLoop(scripted, [lookup], initSession("another prompt", "entirely"));
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "Tape is a strip." });
    expect(scripted.callCount).toBe(2);
  });

  it("useCassette puts the file in __cassettes__ beside the test, named by the test", async () => {
    const model = useCassette(twoTurns(), "use cassette/demo", { mode: "live" });
    expect(model.cassettePath).toBe(join(import.meta.dirname, "__cassettes__", "use cassette-demo.jsonl"));
    const named = useCassette(twoTurns(), undefined, { mode: "live" });
    expect(named.cassettePath).toContain(
      join(
        import.meta.dirname,
        "__cassettes__",
        "cassette- tools, subagents, scripted models - useCassette puts the file",
      ),
    );
  });
});

describe("useCassette at the test's end", () => {
  const folder = join(import.meta.dirname, "__cassettes__");
  const path = join(folder, "left unused.jsonl");
  afterEach(() => rmSync(path, { force: true }));

  // The check runs in vitest's onTestFinished: a cassette left with an unused entry fails the test.
  it.fails("fails the test that left a recorded call unused", async () => {
    mkdirSync(folder, { recursive: true });
    await agentLoop(cassette(twoTurns(), { path, mode: "record" }), [lookup], initSession("s", "define tape"));
    useCassette(unreachable, "left unused", { mode: "replay" });
  });
});

describe("simple-agent-loop cassette diff", () => {
  const run = async (argv: string[]) => {
    let stdout = "";
    let stderr = "";
    const code = await runCli({
      argv,
      env: {},
      cwd: process.cwd(),
      stdin: process.stdin,
      stdout: { write: (text: string) => (stdout += text) } as never,
      stderr: { write: (text: string) => (stderr += text) } as never,
    });
    return { code, stdout, stderr };
  };

  it("exit 0 for the same run (timing aside), 1 naming what changed, 2 on a usage error", async () => {
    const folder = directory();
    const a = join(folder, "a.jsonl");
    const b = join(folder, "b.jsonl");
    await agentLoop(cassette(twoTurns(), { path: a, mode: "record" }), [lookup], initSession("s", "define tape"));
    const slower = lines(a).map((entry) =>
      entry.kind === "model" ? { ...entry, answer: { ...entry.answer, ms: 999 } } : entry,
    );
    writeFileSync(b, slower.map((entry) => JSON.stringify(entry)).join("\n"));
    expect((await run(["cassette", "diff", a, b])).code).toBe(0);
    const changed = scriptedModel([
      [{ type: "tool_call", id: "call_1", name: "lookup", input: { word: "reel" } }],
      [{ role: "assistant", content: "Reel is a spool." }],
    ]);
    await agentLoop(cassette(changed, { path: b, mode: "record" }), [lookup], initSession("s", "define tape"));
    const different = await run(["cassette", "diff", a, b]);
    expect(different.code).toBe(1);
    expect(different.stdout).toContain('call 1 tools: lookup({"word":"tape"}) → lookup({"word":"reel"})');
    expect(different.stdout).toContain('call 2 text: "Tape is a strip." → "Reel is a spool."');
    expect((await run(["cassette", "diff", a])).code).toBe(2);
    expect((await run(["cassette", "diff", a, join(folder, "none.jsonl")])).code).toBe(2);
    // As the main --help names it: its own usage on --help.
    const help = await run(["cassette", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: simple-agent-loop cassette diff <a.jsonl> <b.jsonl>");
  });
});
