import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { runIsolated, type HostSettlement, type IsolatedProgram } from "../../src/tools/code-mode/isolate.ts";
import type { JsonObject } from "simple-agent-loop";

const run = promisify(execFile);
const child = fileURLToPath(new URL("./isolate-child.ts", import.meta.url));

function program(code: string, overrides: Partial<IsolatedProgram> = {}): IsolatedProgram {
  return {
    code,
    toolNames: ["lookup", "fail"],
    call: async (name, input) =>
      name === "fail"
        ? { type: "settled", output: "Error: no such record", isError: true }
        : { type: "settled", output: { found: input }, isError: false },
    now: Date.UTC(2026, 0, 2, 3, 4, 5),
    seed: "call_1",
    timeoutMs: 10_000,
    memoryMb: 64,
    maxCalls: 100,
    signal: new AbortController().signal,
    stopCalls: new AbortController(),
    ...overrides,
  };
}

describe("a program in the isolate", () => {
  it("is the body of an async function: top-level await, return gives the output as JSON", async () => {
    const end = await runIsolated(
      program(
        "const a = await tools.lookup({ key: 'a' });\nconst all = await Promise.all([1, 2].map((n) => tools.lookup({ n })));\nreturn { a, all, none: undefined }",
      ),
    );
    expect(end).toStrictEqual({
      type: "returned",
      output: { a: { found: { key: "a" } }, all: [{ found: { n: 1 } }, { found: { n: 2 } }] },
      logs: [],
    });
  });

  it("gives null for undefined, and strips TypeScript annotations", async () => {
    expect(await runIsolated(program("return undefined"))).toStrictEqual({ type: "returned", output: null, logs: [] });
    const typed =
      "type Row = { id: number };\nconst rows: Row[] = [{ id: 1 }, { id: 2 }];\nreturn rows.filter((row: Row): boolean => row.id > 1) as Row[];";
    expect(await runIsolated(program(typed))).toStrictEqual({ type: "returned", output: [{ id: 2 }], logs: [] });
  });

  it("refuses a BigInt, a function and a cycle in the output", async () => {
    for (const [code, problem] of [
      ["return 10n", "BigInt"],
      ["return { nested: [1, () => 2] }", "function"],
      ["const a = { list: [] }; a.list.push(a); return a", "circular"],
    ] as const) {
      const end = await runIsolated(program(code));
      expect(end.type, code).toBe("failed");
      expect(end.type === "failed" && end.error, code).toMatch(problem);
    }
  });

  it("reports a throw with its name, message and line, and a syntax error", async () => {
    expect(await runIsolated(program("const x = 1;\n\nthrow new RangeError('too far');"))).toStrictEqual({
      type: "failed",
      error: "RangeError: too far (line 3)",
      logs: [],
    });
    const syntax = await runIsolated(program("const x = ;"));
    expect(syntax.type === "failed" && syntax.error).toMatch(/^SyntaxError: /);
    expect(await runIsolated(program("throw 'plain'"))).toStrictEqual({
      type: "failed",
      error: 'Uncaught "plain"',
      logs: [],
    });
  });

  it("keeps console lines as logs", async () => {
    const end = await runIsolated(
      program("console.log('a', 1, { b: 2 }); console.warn('careful'); console.error(new TypeError('x')); return 0"),
    );
    expect(end.logs).toStrictEqual(['a 1 {"b":2}', "[warn] careful", "[error] TypeError: x"]);
  });

  it("rejects a failed call with an Error carrying the output, which the program may catch", async () => {
    const code =
      "try { await tools.fail({}) } catch (error) { return { caught: error.message, output: error.output, isError: error instanceof Error } }";
    expect(await runIsolated(program(code))).toStrictEqual({
      type: "returned",
      output: { caught: "Error: no such record", output: "Error: no such record", isError: true },
      logs: [],
    });
  });

  it("sees a fixed clock, a random sequence seeded by the call id, and no timers", async () => {
    const code =
      "return [Date.now(), new Date().toISOString(), Date(), Math.random(), Math.random(), typeof setTimeout, typeof setInterval, typeof queueMicrotask, new Date(0).toISOString(), new Date() instanceof Date]";
    const first = await runIsolated(program(code));
    const again = await runIsolated(program(code));
    const other = await runIsolated(program(code, { seed: "call_2" }));
    expect(first).toStrictEqual(again);
    if (first.type !== "returned" || other.type !== "returned") throw new Error("expected outputs");
    const [now, iso, , random, , timeout, interval, , epoch, isDate] = first.output as unknown[];
    expect([now, iso, timeout, interval, epoch, isDate]).toStrictEqual([
      Date.UTC(2026, 0, 2, 3, 4, 5),
      "2026-01-02T03:04:05.000Z",
      "undefined",
      "undefined",
      "1970-01-01T00:00:00.000Z",
      true,
    ]);
    expect((other.output as unknown[])[3]).not.toBe(random);
  });

  it("passes calls through in start order with their inputs as JSON, and refuses what is not an object", async () => {
    const calls: [string, JsonObject][] = [];
    const end = await runIsolated(
      program(
        "await tools.lookup({ a: [1, 'x', null] }); await tools.lookup(); const e = await tools.lookup('text').catch((error) => error.message); const f = await tools.lookup({ f: () => 1 }).catch((error) => error.message); return [e, f]",
        { call: async (name, input) => (calls.push([name, input]), { type: "settled", output: null, isError: false }) },
      ),
    );
    expect(calls).toStrictEqual([
      ["lookup", { a: [1, "x", null] }],
      ["lookup", {}],
    ]);
    expect(end).toStrictEqual({
      type: "returned",
      output: [
        "tools.lookup takes one object as its input",
        'the input of tools.lookup cannot hold a function (at "f")',
      ],
      logs: [],
    });
  });
});

describe("escapes", () => {
  const probes = [
    'return tools.lookup.constructor.constructor("return typeof process")()',
    'return (async () => {}).constructor("return typeof require")()',
    "return [typeof process, typeof require, typeof fetch, typeof globalThis.Buffer, typeof WebAssembly, typeof module]",
    'return Function("return this")() === globalThis',
    "try { await import('node:fs'); return 'imported' } catch (error) { return 'refused' }",
    "const r = await tools.lookup({}); return Object.getPrototypeOf(r).constructor.constructor('return typeof process')()",
    "try { await tools.fail({}) } catch (error) { return error.constructor.constructor('return typeof process')() }",
    "return Object.getOwnPropertyNames(globalThis).filter((name) => !builtins.includes(name))".replace(
      "builtins",
      JSON.stringify([]),
    ),
  ];

  it("finds no host object from tools, results or errors", async () => {
    const outputs: unknown[] = [];
    for (const code of probes.slice(0, -1)) {
      const end = await runIsolated(program(code));
      outputs.push(end.type === "returned" ? end.output : end.type === "failed" ? end.error : end.type);
    }
    expect(outputs).toStrictEqual([
      "undefined",
      "undefined",
      ["undefined", "undefined", "undefined", "undefined", "undefined", "undefined"],
      true,
      "refused",
      "undefined",
      "undefined",
    ]);
  });

  it("has only the language's own globals besides tools and console", async () => {
    const end = await runIsolated(program(probes.at(-1)!));
    if (end.type !== "returned") throw new Error(JSON.stringify(end));
    const names = end.output as string[];
    expect(names).toContain("tools");
    expect(names).toContain("console");
    for (const host of ["process", "require", "fetch", "setTimeout", "Buffer", "WebAssembly", "module", "exports"])
      expect(names).not.toContain(host);
  });

  it("cannot change what the host reads: a replaced JSON or polluted prototype stays in the program", async () => {
    const code =
      "JSON.stringify = () => '\"forged\"'; JSON.parse = () => 'forged'; Object.prototype.polluted = 1; Array.prototype.toJSON = undefined; const r = await tools.lookup({ k: 1 }); return { r, p: ({}).polluted }";
    const seen: JsonObject[] = [];
    const end = await runIsolated(
      program(code, {
        call: async (_name, input) => (seen.push(input), { type: "settled", output: { v: 1 }, isError: false }),
      }),
    );
    expect(seen).toStrictEqual([{ k: 1 }]);
    expect(end).toStrictEqual({ type: "returned", output: { r: { v: 1 }, p: 1 }, logs: [] });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("hands __proto__ keys of results and inputs over as plain data", async () => {
    const end = await runIsolated(
      program(
        'const r = await tools.lookup(JSON.parse(\'{"__proto__": {"x": 1}}\')); return [r.found.x === undefined, Object.keys(r.found)]',
      ),
    );
    expect(end).toStrictEqual({ type: "returned", output: [true, ["__proto__"]], logs: [] });
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe("holding and aborting", () => {
  it("stops once a call is held, after the calls already started settle; starts nothing more", async () => {
    const started: string[] = [];
    let finishSlow: (() => void) | undefined;
    const end = await runIsolated(
      program(
        "const [a, b] = await Promise.all([tools.lookup({ n: 1 }), tools.lookup({ n: 2, hold: true })]); await tools.lookup({ n: 3 }); return 'never'",
        {
          call: (_name, input): Promise<HostSettlement> => {
            started.push(JSON.stringify(input));
            if (input.hold === true) {
              setTimeout(() => finishSlow?.(), 50);
              return Promise.resolve({ type: "hold" });
            }
            return new Promise((resolve) => {
              finishSlow = () => resolve({ type: "settled", output: 1, isError: false });
            });
          },
        },
      ),
    );
    expect(end).toStrictEqual({ type: "held", logs: [] });
    expect(started).toStrictEqual(['{"n":1}', '{"n":2,"hold":true}']);
  });

  it("ends aborted when its signal aborts while a call runs", async () => {
    const controller = new AbortController();
    const end = await runIsolated(
      program("await tools.lookup({}); return 1", {
        signal: controller.signal,
        call: () => {
          setTimeout(() => controller.abort(), 10);
          return new Promise((resolve) =>
            setTimeout(() => resolve({ type: "settled", output: 1, isError: false }), 100),
          );
        },
      }),
    );
    expect(end).toStrictEqual({ type: "aborted", logs: [] });
  });
});

// Each limit in a child process: a limit that does not hold kills the child at the deadline (or
// its memory), and the test fails instead of hanging.
describe("limits, each in a child process", () => {
  async function inChild(
    code: string,
    options: object,
  ): Promise<{ end: { type: string; error?: string }; rssMb: number }> {
    const { stdout } = await run(
      process.execPath,
      ["--conditions=simple-agent-loop-source", child, code, JSON.stringify(options)],
      { timeout: 60_000, killSignal: "SIGKILL", maxBuffer: 1 << 20 },
    );
    return JSON.parse(stdout.trim().split("\n").at(-1)!) as { end: { type: string; error?: string }; rssMb: number };
  }

  it("stops an endless loop at the time limit", async () => {
    const { end } = await inChild("while (true) {}", { timeoutMs: 500 });
    expect(end).toMatchObject({ type: "failed", error: "time limit: the program ran longer than 500 ms" });
  }, 90_000);

  it("stops an endless loop of microtasks at the time limit", async () => {
    const { end } = await inChild("for (;;) await null", { timeoutMs: 500 });
    expect(end).toMatchObject({ type: "failed", error: "time limit: the program ran longer than 500 ms" });
  }, 90_000);

  it("ends a program awaiting a promise that never settles", async () => {
    const { end } = await inChild("await new Promise(() => {}); return 1", { timeoutMs: 60_000 });
    expect(end.type).toBe("failed");
    expect(end.error).toMatch(/^time limit: /);
  }, 90_000);

  it("bounds memory: arrays pushed without end fail with out of memory, the process stays small", async () => {
    const { end, rssMb } = await inChild(
      "const all = []; for (let i = 0; i < 1000; i++) all.push(new Array(100000).fill(i)); return all.length",
      { memoryMb: 32 },
    );
    expect(end).toMatchObject({ type: "failed", error: expect.stringMatching(/out of memory/) });
    expect(rssMb).toBeLessThan(400);
  }, 90_000);

  it("bounds a string doubled without end", async () => {
    const { end } = await inChild("let s = 'x'; for (;;) s += s; return s.length", { memoryMb: 32 });
    expect(end).toMatchObject({ type: "failed" });
  }, 90_000);

  it("stops deep recursion", async () => {
    const { end } = await inChild("function f(n) { return f(n + 1) + 1 } return f(0)", {});
    expect(end).toMatchObject({ type: "failed", error: expect.stringMatching(/stack overflow/) });
  }, 90_000);

  it("ends a program that starts more calls than maxCalls", async () => {
    const { end } = await inChild("for (let i = 0; ; i++) await tools.echo({ i })", { maxCalls: 5 });
    expect(end).toMatchObject({ type: "failed", error: "the program started more than 5 tool calls (maxCalls)" });
  }, 90_000);
});
