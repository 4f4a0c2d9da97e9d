import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Message, Session } from "simple-agent-loop";
import { loadSession } from "simple-agent-loop/store";
import { expectEveryCallAnsweredOnce, withoutTs } from "../helpers.ts";
import { callIds, runCrashAgent, script } from "./crash-agent.ts";
import { crashChild } from "./child-process.ts";
import { answeredIds, expectValidLog, tempDir, warningsCollector } from "./helpers.ts";

// Real processes, real SIGKILLs. A child runs the crash agent (crash-agent.ts: 5 model turns of
// 25 ms, 7 tool calls of 8 ms, one at a time, compaction on) on a session file; it is killed at a
// point, then the file is loaded and checked, and the run resumed in this process to the end.
//
// The guarantee tested, exactly: after any kill, the file loads as a valid session (each result
// after its call, at most one per call); resuming ends with every call answered exactly once and a
// session equal (without `ts`) to an uninterrupted run's; a tool call whose result was in the log
// when the process died never runs again. A call whose work was done but whose result was not yet
// recorded when the process died runs again on resume, once (each call's side effects = 1 + the
// number of kills that caught it so), and a kill catches at most one call so: the one running.
// Two limits, both from the core (see the last two tests): a kill between two messages of one
// model turn keeps that turn short (its missing calls never ran), and one tool at a time, the next
// tool starts just before the previous result is recorded.

type Kill = { point: string; killed: boolean; warnings: string[]; answered: Set<string>; effects: Map<string, number> };

describe("crash safety: a child process killed with SIGKILL, then resumed from its file", () => {
  it("resumes to the same session as an uninterrupted run, never re-running a recorded tool call", async () => {
    const directory = tempDir();
    const baseline = await runCrashAgent(join(directory, "baseline.jsonl"), join(directory, "baseline.effects"));
    expect(await loadSession(join(directory, "baseline.jsonl"))).toStrictEqual(baseline);
    expect(countEffects(join(directory, "baseline.effects"))).toStrictEqual(new Map(callIds.map((id) => [id, 1])));
    // The images live in blobs (the prompt's and one per result), not in the log's lines.
    expect(readdirSync(join(directory, "baseline.blobs")).length).toBe(1 + callIds.length);
    expect(readFileSync(join(directory, "baseline.jsonl"), "utf8")).not.toMatch(/"data":/);

    const random = seededRandom(20_240_611);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const timer = (): string => `timer:${Math.floor(random() * 260)}`;
    const plans: { name: string; points: string[]; stops: boolean }[] = [
      { name: "during the first model call", points: ["model:0"], stops: true },
      { name: "during a later model call", points: [`model:${1 + Math.floor(random() * 4)}`], stops: true },
      {
        name: "between tool calls (a result just recorded)",
        points: [`result:${1 + Math.floor(random() * 6)}`],
        stops: true,
      },
      // The first call of a turn: see the last test for a later one.
      {
        name: "during a tool, before its side effect",
        points: [`start:${pick(["a1", "b1", "c1", "d1"])}`],
        stops: true,
      },
      {
        name: "during a tool, after its side effect, before its result is recorded",
        points: [`effect:${pick(callIds)}`],
        stops: true,
      },
      { name: "mid-write: the result line torn", points: [`tear:${pick(callIds)}`], stops: true },
      {
        name: "twice: between tools, then mid-write in the resumed child",
        points: [`result:${1 + Math.floor(random() * 3)}`, `tear:${pick(["c2", "c3", "d1"])}`],
        stops: true,
      },
      ...Array.from({ length: 4 }, () => ({ name: "at a random time", points: [timer()], stops: false })),
      { name: "at random times, twice", points: [timer(), timer()], stops: false },
    ];

    const reports = await Promise.all(
      plans.map(async (plan, index) => ({
        plan,
        ...(await crashAndResume(join(directory, `run-${index}`), plan.points)),
      })),
    );

    for (const { plan, kills, resumeWarnings, final, loaded, effects } of reports) {
      const context = `${plan.name} (${plan.points.join(", ")})`;
      if (plan.stops) {
        expect(
          kills.every((kill) => kill.killed),
          context,
        ).toBe(true);
        // Only a torn write leaves a partial line: dropped when loading, cut off by the next writer.
        const torn = kills.map((kill) =>
          kill.point.startsWith("tear:") ? [expect.stringMatching(/partial last line .*left out/)] : [],
        );
        expect(
          kills.map((kill) => kill.warnings),
          context,
        ).toStrictEqual(torn);
        const lastTorn = kills.at(-1)!.point.startsWith("tear:");
        expect(resumeWarnings, context).toStrictEqual(
          lastTorn ? [expect.stringMatching(/partial last line .*cut off before the next append/)] : [],
        );
      }
      // The file holds exactly the in-memory session, which is the uninterrupted run's, less the
      // calls of a model turn a kill cut short (see the second test): those never ran.
      const lost = new Set(kills.flatMap((kill) => cutCalls(kill.session)));
      if (plan.stops) expect([...lost], context).toStrictEqual([]);
      expect(loaded, context).toStrictEqual(final);
      expect(withoutTs(final), context).toStrictEqual(
        withoutTs(baseline).filter((message) => !("id" in message && lost.has(message.id))),
      );
      expectEveryCallAnsweredOnce(final);
      for (const id of lost) expect(effects.get(id), `${context}: ${id} was cut from its turn`).toBeUndefined();
      // What a kill caught done but unrecorded: only the tool it stopped in, never a finished one
      // (with one tool at a time, a result is in the log before the next tool or model call starts).
      kills.forEach((kill, index) => {
        const previous = kills[index - 1]?.effects ?? new Map<string, number>();
        const unrecorded = callIds.filter(
          (id) => !kill.answered.has(id) && (kill.effects.get(id) ?? 0) > (previous.get(id) ?? 0),
        );
        const [kind, id] = kill.point.split(":");
        if (kind === "effect" || kind === "tear")
          expect(unrecorded, `${context}: after ${kill.point}`).toStrictEqual([id]);
        else if (kind === "timer") expect(unrecorded.length, `${context}: after ${kill.point}`).toBeLessThanOrEqual(1);
        else expect(unrecorded, `${context}: after ${kill.point}`).toStrictEqual([]);
      });
      for (const id of callIds.filter((id) => !lost.has(id))) {
        // Recorded before a kill: never ran again.
        for (const kill of kills)
          if (kill.answered.has(id))
            expect(effects.get(id), `${context}: ${id} re-ran after ${kill.point}`).toBe(kill.effects.get(id));
        // Done but unrecorded at a kill: ran again, once.
        let unrecorded = 0;
        let before = 0;
        for (const kill of kills) {
          const now = kill.effects.get(id) ?? 0;
          if (!kill.answered.has(id) && now > before) unrecorded++;
          before = now;
        }
        expect(effects.get(id), `${context}: side effects of ${id}`).toBe(1 + unrecorded);
      }
    }
    // The plans that stop at a point hit what they aim at.
    const byName = new Map(reports.map((report) => [report.plan.name, report]));
    const effectPlan = byName.get("during a tool, after its side effect, before its result is recorded")!;
    const effectId = effectPlan.plan.points[0]!.split(":")[1]!;
    expect(effectPlan.effects.get(effectId)).toBe(2);
    expect(effectPlan.kills[0]!.answered.has(effectId)).toBe(false);
    const tornPlan = byName.get("mid-write: the result line torn")!;
    expect(tornPlan.effects.get(tornPlan.plan.points[0]!.split(":")[1]!)).toBe(2);
    const firstCall = byName.get("during the first model call")!;
    // Killed in its first model call: the prompt alone. The baseline's own prompt lost its image to
    // compaction later in its run (an image older than the window becomes a placeholder), so the
    // prompt is compared by its text and the killed one still holds the image itself.
    const [system, prompt, ...rest] = withoutTs(firstCall.kills[0]!.session);
    expect(rest).toStrictEqual([]);
    expect(system).toStrictEqual(withoutTs(baseline)[0]);
    const textOf = (message: unknown): unknown =>
      (message as { content: { type: string; text?: string }[] }).content.filter(
        (part) => part.type === "text" && !part.text!.startsWith("[image:"),
      );
    expect(textOf(prompt)).toStrictEqual(textOf(withoutTs(baseline)[1]));
    expect((prompt as { content: { type: string }[] }).content.some((part) => part.type === "image")).toBe(true);
  }, 180_000); // dozens of child processes: minutes on a loaded machine

  // A model turn enters the session (and the log, in one write) whole, before the loop announces
  // any of its messages: a kill as its first message is announced finds the whole turn recorded.
  it("a model turn is recorded whole: a kill right after its first message finds all of it in the log", async () => {
    const directory = tempDir();
    const baseline = await runCrashAgent(join(directory, "baseline.jsonl"), join(directory, "baseline.effects"));
    const { kills, final, loaded, effects } = await crashAndResume(join(directory, "run"), ["message:1"]);
    expect(
      withoutTs(kills[0]!.session).map((message) => ("role" in message ? message.role : message.type)),
    ).toStrictEqual(["system", "user", "thinking", "tool_call", "tool_call"]);
    expect(loaded).toStrictEqual(final);
    expectEveryCallAnsweredOnce(final);
    expect(withoutTs(final)).toStrictEqual(withoutTs(baseline));
    expect([...effects.values()].every((count) => count === 1)).toBe(true);
  }, 120_000); // child processes that load TypeScript: tens of seconds on a loaded machine

  // One tool at a time, a result must be in the log before the next call's handler starts (the
  // executor delivers each result before it passes its slot on); otherwise a kill while the next
  // tool starts would find the previous one done but unrecorded, and it would run again.
  it("one tool at a time: a tool's result is recorded before the next tool starts", async () => {
    const directory = tempDir();
    const { kills, effects } = await crashAndResume(join(directory, "run"), ["start:c2"]);
    expect(kills[0]!.effects.get("c1")).toBe(1);
    expect(kills[0]!.answered.has("c1")).toBe(true);
    expect(effects.get("c1")).toBe(1);
  }, 120_000);
});

async function crashAndResume(
  base: string,
  points: readonly string[],
): Promise<{
  kills: (Kill & { session: Session })[];
  resumeWarnings: string[];
  final: Session;
  loaded: Session;
  effects: Map<string, number>;
}> {
  const sessionPath = `${base}.jsonl`;
  const effectsPath = `${base}.effects`;
  const kills: (Kill & { session: Session })[] = [];
  for (const point of points) {
    const killed = await crashChild(sessionPath, effectsPath, point);
    const { warnings, onWarning } = warningsCollector();
    const session = existsSync(sessionPath) ? await loadSession(sessionPath, { onWarning }) : { messages: [] };
    expectValidLog(session);
    kills.push({
      point,
      killed,
      warnings,
      answered: answeredIds(session),
      effects: countEffects(effectsPath),
      session,
    });
  }
  const resume = warningsCollector();
  const final = await runCrashAgent(sessionPath, effectsPath, {}, resume.onWarning);
  return {
    kills,
    resumeWarnings: resume.warnings,
    final,
    loaded: await loadSession(sessionPath),
    effects: countEffects(effectsPath),
  };
}

// The calls of a scripted model turn that had begun in the session but were not recorded: the
// kill landed between two messages of that turn.
function cutCalls(session: Session): string[] {
  const recorded = new Set(
    session.messages.flatMap((message) => ("type" in message && message.type === "tool_call" ? [message.id] : [])),
  );
  return script.flatMap((turn) => {
    const calls = turn.flatMap((message) => ("type" in message && message.type === "tool_call" ? [message.id] : []));
    const opener = turn[0]!;
    const begun =
      calls.some((id) => recorded.has(id)) || session.messages.some((message) => sameStart(message, opener));
    return begun ? calls.filter((id) => !recorded.has(id)) : [];
  });
}

// Compaction shortens thinking; its start stays.
function sameStart(message: Message, opener: Message): boolean {
  if ("role" in opener) return "role" in message && message.role === opener.role && message.content === opener.content;
  return (
    opener.type === "thinking" &&
    "type" in message &&
    message.type === "thinking" &&
    message.content.slice(0, 40) === opener.content.slice(0, 40)
  );
}

function countEffects(path: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!existsSync(path)) return counts;
  for (const id of readFileSync(path, "utf8").split("\n")) if (id !== "") counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

// mulberry32: the same kill points on every run.
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}
