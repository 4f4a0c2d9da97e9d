import { describe, expect, it } from "vitest";
import {
  agentLoop,
  agentStream,
  initSession,
  tool,
  type AgentEvent,
  type Guardrail,
  type GuardrailVerdict,
  type InvokeModel,
  type ModelStreamEvent,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce, withoutTs } from "../helpers.ts";

const answer = (content: string) => ({ role: "assistant" as const, content });

// A promise with its resolve function, for a test to settle when it decides.
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

// A guardrail whose verdict the test gives, once it has been asked.
function heldGuardrail(name: string, mode: "before" | "parallel") {
  const asked = deferred();
  const verdict = deferred<GuardrailVerdict>();
  const guardrail: Guardrail = {
    name,
    mode,
    check: () => {
      asked.resolve();
      return verdict.promise;
    },
  };
  return { guardrail, asked: asked.promise, answer: verdict.resolve };
}

function recordingTool(started: string[]) {
  return tool({
    name: "act",
    description: "acts",
    inputSchema: { type: "object", properties: {} },
    handler: () => {
      started.push("act");
      return "acted";
    },
  });
}

// A streamed answer, delta by delta, then its message.
function streamed(text: string, pieces: string[]): AsyncIterable<ModelStreamEvent> {
  return (async function* () {
    for (const delta of pieces) yield { type: "text-delta", delta } as const;
    yield { type: "message", message: { role: "assistant", content: text } } as const;
    yield { type: "response-end", stopReason: "end_turn" } as const;
  })();
}

describe("input guardrail modes with a slow model", () => {
  it("before: the model is not called until the guardrail passed", async () => {
    const { guardrail, asked, answer: decide } = heldGuardrail("slow-check", "before");
    const model = scriptedModel([answer("hello")]);
    const run = agentLoop(model, [], initSession("s", "hi"), { guardrails: { input: [guardrail] } });
    await asked;
    expect(model.callCount).toBe(0);
    decide({ action: "allow" });
    const session = await run;
    expect(model.callCount).toBe(1);
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "hello" });
  });

  it("parallel: a trip aborts the model call (the model sees its signal abort); no tool starts", async () => {
    const { guardrail, answer: decide } = heldGuardrail("topic", "parallel");
    const called = deferred();
    let sawAbort = false;
    const model: InvokeModel = (_tools, _session, context) => {
      called.resolve();
      // A slow model: it answers only when its call is aborted.
      return new Promise((_resolve, reject) => {
        context.signal.addEventListener("abort", () => {
          sawAbort = true;
          reject(context.signal.reason);
        });
      });
    };
    const started: string[] = [];
    const events: AgentEvent[] = [];
    const run = agentLoop(model, [recordingTool(started)], initSession("s", "stock tips?"), {
      guardrails: { input: [guardrail] },
      onEvent: (event) => events.push(event),
    });
    await called.promise;
    decide({ action: "block", message: "off topic" });
    const session = await run;
    expect(sawAbort).toBe(true);
    expect(started).toStrictEqual([]);
    expect(withoutTs(session)).toStrictEqual([
      { role: "system", content: "s" },
      {
        role: "user",
        content: "[blocked by topic]",
        guardrail: { name: "topic", action: "block", message: "off topic" },
      },
    ]);
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "blocked" });
  });

  it("parallel: a model that answers first with a tool call waits; no tool starts until the guardrail settles", async () => {
    for (const verdict of ["allow", "block"] as const) {
      const { guardrail, answer: decide } = heldGuardrail("topic", "parallel");
      const answered = deferred();
      const model = scriptedModel(
        [
          {
            stream: true,
            messages: () => {
              answered.resolve();
              return [{ type: "tool_call", id: "c1", name: "act", input: {} }];
            },
          },
          answer("done"),
        ],
        { record: false },
      );
      const started: string[] = [];
      const events: AgentEvent[] = [];
      const run = agentLoop(model, [recordingTool(started)], initSession("s", "hi"), {
        guardrails: { input: [guardrail] },
        onEvent: (event) => events.push(event),
      });
      await answered.promise;
      // The model's whole turn is in (its tool-call-end event), and still nothing ran.
      await until(() => events.some((event) => event.type === "tool-call-end"));
      expect(started).toStrictEqual([]);
      decide(verdict === "allow" ? { action: "allow" } : { action: "block", message: "no" });
      const session = await run;
      expectEveryCallAnsweredOnce(session);
      if (verdict === "allow") {
        expect(started).toStrictEqual(["act"]);
        expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "done" });
      } else {
        expect(started).toStrictEqual([]);
        // The turn never entered the session: no call to answer.
        expect(session.messages.some((message) => "type" in message && message.type === "tool_call")).toBe(false);
        expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "blocked" });
      }
    }
  });
});

describe("streamed answers and output guardrails", () => {
  const block: Guardrail = {
    name: "leaks",
    check: ({ text }) =>
      text?.includes("secret") === true ? { action: "block", message: "a secret" } : { action: "allow" },
  };

  it("text streams as it comes; a block retracts what was shown", async () => {
    const model: InvokeModel = () => streamed("the secret is 42", ["the ", "secret ", "is 42"]);
    const events: AgentEvent[] = [];
    for await (const event of agentStream(model, [], initSession("s", "hi"), { guardrails: { output: [block] } }))
      events.push(event);
    const shown = events.flatMap((event) =>
      event.type === "text-delta" || event.type === "text-retract" || event.type === "guardrail" ? [event] : [],
    );
    expect(shown).toStrictEqual([
      { type: "text-delta", delta: "the " },
      { type: "text-delta", delta: "secret " },
      { type: "text-delta", delta: "is 42" },
      { type: "guardrail", name: "leaks", kind: "output", action: "block", message: "a secret" },
      { type: "text-retract", text: "the secret is 42" },
    ]);
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "blocked" });
  });

  it('holdBack "answer": nothing of the answer is shown before the guardrails passed it', async () => {
    const events: AgentEvent[] = [];
    const holding: Guardrail = { ...block, holdBack: "answer" };
    const allowed: InvokeModel = () => streamed("all fine", ["all ", "fine"]);
    for await (const event of agentStream(allowed, [], initSession("s", "hi"), { guardrails: { output: [holding] } }))
      events.push(event);
    const order = events.flatMap((event) =>
      event.type === "text-delta" ? [event.delta] : event.type === "guardrail" ? [`guardrail:${event.action}`] : [],
    );
    expect(order).toStrictEqual(["guardrail:allow", "all ", "fine"]);
    const blocked: AgentEvent[] = [];
    const leaking: InvokeModel = () => streamed("a secret", ["a ", "secret"]);
    for await (const event of agentStream(leaking, [], initSession("s", "hi"), { guardrails: { output: [holding] } }))
      blocked.push(event);
    expect(blocked.some((event) => event.type === "text-delta" || event.type === "text-retract")).toBe(false);
    expect(blocked.at(-1)).toMatchObject({ type: "run-end", outcome: "blocked" });
  });

  it('holdBack "sentence": each sentence is shown once it passed; a block stops the stream there', async () => {
    const asked: string[] = [];
    const sentences: Guardrail = {
      name: "leaks",
      holdBack: "sentence",
      check: ({ text = "" }) => {
        asked.push(text);
        return text.includes("secret") ? { action: "block", message: "a secret" } : { action: "allow" };
      },
    };
    const more = deferred();
    let aborted = false;
    const model: InvokeModel = (_tools, _session, context) =>
      (async function* () {
        context.signal.addEventListener("abort", () => {
          aborted = true;
          more.resolve();
        });
        yield { type: "text-delta", delta: "Hello there. " } as const;
        yield { type: "text-delta", delta: "The secret is 42. " } as const;
        // The model would go on; the block aborts it first.
        await more.promise;
        yield { type: "text-delta", delta: "More." } as const;
        yield {
          type: "message",
          message: { role: "assistant", content: "Hello there. The secret is 42. More." },
        } as const;
      })();
    const events: AgentEvent[] = [];
    const session = await agentStream(model, [], initSession("s", "hi"), {
      guardrails: { output: [sentences] },
      onEvent: (event) => events.push(event),
    }).result;
    expect(aborted).toBe(true);
    const deltas = events.flatMap((event) => (event.type === "text-delta" ? [event.delta] : []));
    expect(deltas).toStrictEqual(["Hello there. "]);
    expect(asked.slice(0, 2)).toStrictEqual(["Hello there. ", "Hello there. The secret is 42. "]);
    expect(events.some((event) => event.type === "text-retract")).toBe(true);
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "[blocked by leaks]" });
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "blocked" });
  });

  it("a redacted streamed answer is retracted and shown redacted", async () => {
    const model: InvokeModel = () => streamed("call 555-0100", ["call ", "555-0100"]);
    const redact: Guardrail = {
      name: "phone",
      check: ({ text = "" }) => ({ action: "redact", replacement: text.replace(/555-\d+/, "[phone]") }),
    };
    const events: AgentEvent[] = [];
    const session = await agentStream(model, [], initSession("s", "hi"), {
      guardrails: { output: [redact] },
      onEvent: (event) => events.push(event),
    }).result;
    const shown = events.flatMap((event) =>
      event.type === "text-delta" ? [`+${event.delta}`] : event.type === "text-retract" ? [`-${event.text}`] : [],
    );
    expect(shown).toStrictEqual(["+call ", "+555-0100", "-call 555-0100", "+call [phone]"]);
    expect(session.messages.at(-1)).toMatchObject({ content: "call [phone]", guardrail: { action: "redact" } });
  });
});

// Waits for a condition that events of the run make true, a macrotask at a time.
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}
