// Session viewer benchmark: how long a big session log takes to show. Writes a log with the real
// loop (a scripted model, tools with large outputs, the file store), serves it with `serveViewer`
// in its own process, opens it in headless Chromium and measures, per run: the time from
// navigation to the first drawn timeline (body[data-state=ready]) and to the whole log drawn (the
// element of the log's last line is there), the server's CPU time and the bytes it sent, and the
// page's main-thread time (script, style, layout). Run from bench/:
//   ../node_modules/.bin/node --conditions=simple-agent-loop-source viewer.ts [--turns=300] [--runs=3]
//     [--load=N]        N busy processes beside it (a loaded machine)
//     [--cpu-prof]      the server writes a CPU profile (.cpuprofile) to bench/profiles/
//     [--trace]         Chromium writes a trace of the first run to bench/profiles/viewer-trace.json
//     [--regenerate]    write the log again even when it exists
//     [--viewer=PATH]   serve with the viewer module at PATH (another checkout's src/viewer/index.ts)
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { chromium, type Browser } from "playwright-core";
import { agentLoop, extendSession, send, tool, type ModelMessage } from "simple-agent-loop";
import { closeSession, openSession } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";

const argument = (name: string): string | undefined =>
  process.argv.find((given) => given.startsWith(`--${name}`))?.split("=")[1] ??
  (process.argv.includes(`--${name}`) ? "" : undefined);
const turns = Number(argument("turns") ?? 300);
const runs = Number(argument("runs") ?? 3);
const load = Number(argument("load") ?? 0);
const log = (line: string): void => void process.stderr.write(`${line}\n`);
const here = import.meta.dirname;
const vocabulary: string[] =
  "const let return function import export await async value result error session turn model tool call input output line file path index count message entry record update state".split(
    " ",
  );
const profiles = join(here, "profiles");

const path = join(tmpdir(), `simple-agent-loop-viewer-bench-${turns}.jsonl`);
if (argument("regenerate") !== undefined || !existsSync(path)) await writeLog(path, turns);
const size = statSync(path).size;
const lines = readFileSync(path, "utf8")
  .split("\n")
  .filter((text) => text !== "");
const longestLine = Math.max(...lines.map((text) => Buffer.byteLength(text)));
log(
  `log: ${path}, ${(size / 1e6).toFixed(1)} MB, ${lines.length} lines (longest ${(longestLine / 1e3).toFixed(0)} KB), ${turns} turns`,
);

const burners = Array.from({ length: load }, () => spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }));
const server = await startServer(path, argument("cpu-prof") !== undefined, argument("viewer"));
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
const results: Run[] = [];
try {
  for (let run = 0; run < runs; run++) {
    const result = await measure(browser, server, lines.length, run === 0 && argument("trace") !== undefined);
    log(
      `run ${run + 1}: first draw ${result.firstDrawMs} ms, fully drawn ${result.fullyDrawnMs} ms, server CPU ${result.serverCpuMs} ms, ` +
        `${(result.bytesSent / 1e6).toFixed(1)} MB sent, page script ${result.pageScriptMs} ms, style ${result.pageStyleMs} ms, layout ${result.pageLayoutMs} ms`,
    );
    results.push(result);
  }
} finally {
  await browser.close();
  await server.stop();
  for (const burner of burners) burner.kill();
}

const median = (key: keyof Run): number =>
  [...results.map((result) => result[key])].sort((a, b) => a - b)[Math.floor(results.length / 2)]!;
const summary = Object.fromEntries((Object.keys(results[0]!) as (keyof Run)[]).map((key) => [key, median(key)]));
console.log(
  `viewer, ${(size / 1e6).toFixed(1)} MB log, ${lines.length} lines, ${turns} turns, median of ${runs} runs${load > 0 ? `, ${load} busy processes beside` : ""}:`,
);
console.log(`first draw      ${summary.firstDrawMs} ms`);
console.log(`fully drawn     ${summary.fullyDrawnMs} ms`);
console.log(`server CPU      ${summary.serverCpuMs} ms`);
console.log(`bytes sent      ${(summary.bytesSent! / 1e6).toFixed(1)} MB`);
console.log(
  `page main thread: script ${summary.pageScriptMs} ms, style ${summary.pageStyleMs} ms, layout ${summary.pageLayoutMs} ms`,
);
writeFileSync(
  join(here, "viewer-results.json"),
  `${JSON.stringify({ log: { bytes: size, lines: lines.length, turns, longestLine }, load, median: summary, runs: results, node: process.version }, null, 2)}\n`,
);

type Run = {
  firstDrawMs: number;
  fullyDrawnMs: number;
  serverCpuMs: number;
  bytesSent: number;
  pageScriptMs: number;
  pageStyleMs: number;
  pageLayoutMs: number;
};

async function measure(browser: Browser, server: Server, lastLine: number, trace: boolean): Promise<Run> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  // Times from navigation start, noted by the page itself as soon as the DOM shows them.
  // (In-page code as strings: this package compiles without DOM types.)
  await page.addInitScript(`
    const marks = (window.benchMarks = {});
    new MutationObserver((_, observer) => {
      if (marks.firstDraw === undefined && document.body?.dataset.state === "ready") marks.firstDraw = performance.now();
      if (marks.fullyDrawn === undefined && document.querySelector('[data-line="${lastLine}"]') !== null) {
        marks.fullyDrawn = performance.now();
        observer.disconnect();
      }
    }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-state"] });
  `);
  // Not the Network domain: with it on, Chromium copies every byte received to DevTools.
  const devtools = await page.context().newCDPSession(page);
  await devtools.send("Performance.enable");
  if (trace) {
    mkdirSync(profiles, { recursive: true });
    await browser.startTracing(page, { path: join(profiles, "viewer-trace.json"), screenshots: false });
  }
  const before = await server.usage();
  await page.goto(server.url);
  await page.waitForFunction("window.benchMarks.fullyDrawn !== undefined", undefined, {
    timeout: 300_000,
    polling: 100,
  });
  const marks = await page.evaluate<{ firstDraw: number; fullyDrawn: number }>("window.benchMarks");
  const after = await server.usage();
  if (trace) await browser.stopTracing();
  const { metrics } = await devtools.send("Performance.getMetrics");
  const metric = (name: string): number =>
    Math.round((metrics.find((entry) => entry.name === name)?.value ?? 0) * 1000);
  await page.close();
  return {
    firstDrawMs: Math.round(marks.firstDraw),
    fullyDrawnMs: Math.round(marks.fullyDrawn),
    serverCpuMs: Math.round(after.cpuMs - before.cpuMs),
    bytesSent: after.bytesWritten - before.bytesWritten,
    pageScriptMs: metric("ScriptDuration"),
    pageStyleMs: metric("RecalcStyleDuration"),
    pageLayoutMs: metric("LayoutDuration"),
  };
}

type Server = { url: string; usage: () => Promise<{ cpuMs: number; bytesWritten: number }>; stop: () => Promise<void> };

async function startServer(logPath: string, cpuProfile: boolean, viewerModule: string | undefined): Promise<Server> {
  if (cpuProfile) mkdirSync(profiles, { recursive: true });
  const flags = [
    "--conditions=simple-agent-loop-source",
    ...(cpuProfile ? ["--cpu-prof", `--cpu-prof-dir=${profiles}`] : []),
  ];
  const child: ChildProcess = spawn(
    process.execPath,
    [...flags, join(here, "viewer-server.ts"), logPath, ...(viewerModule === undefined ? [] : [viewerModule])],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const answers = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const answer = await answers.next();
    if (answer.done === true) throw new Error("the viewer server exited");
    return answer.value;
  };
  const url = await next();
  return {
    url,
    usage: async () => (
      child.stdin!.write("usage\n"),
      JSON.parse(await next()) as { cpuMs: number; bytesWritten: number }
    ),
    stop: () => new Promise((done) => (child.once("exit", () => done()), child.stdin!.end())),
  };
}

// A session as an agent working through a codebase writes it: each turn a user request, a model
// call thinking and reading a file and searching (the file's content is the large output, 50 to
// 280 KB), then the answer. Contents are pseudo-random but the same on every run.
async function writeLog(logPath: string, turnCount: number): Promise<void> {
  const started = performance.now();
  const random = seededRandom(42);
  // Written beside, then renamed: an interrupted run leaves no half log to be measured next time.
  const writing = `${logPath}.writing`;
  rmSync(writing, { force: true });
  const session = await openSession(writing, { sync: "off" });
  const tools = [
    tool({
      name: "read_file",
      description: "Read a file.",
      inputSchema: {
        type: "object",
        properties: { path: { type: "string" }, bytes: { type: "number" } },
        required: ["path", "bytes"],
      },
      handler: (input) => sourceText(Number(input.bytes), random),
    }),
    tool({
      name: "grep",
      description: "Search the repository.",
      inputSchema: { type: "object", properties: { pattern: { type: "string" } }, required: ["pattern"] },
      handler: (input) =>
        Array.from(
          { length: 12 },
          (_, index) => `src/module-${index}.ts:${10 + index * 7}: ${String(input.pattern)}(${words(6, random)})`,
        ).join("\n"),
    }),
  ];
  extendSession(session, { role: "system", content: `You are a careful software engineer. ${words(120, random)}` });
  for (let turn = 1; turn <= turnCount; turn++) {
    send(session, `Turn ${turn}: ${words(30, random)}?`);
    const usage = (input: number, output: number) => ({ inputTokens: input, outputTokens: output });
    const modelTurns: ModelMessage[][] = [
      [
        { type: "thinking", content: words(150 + Math.floor(random() * 150), random) },
        {
          type: "tool_call",
          id: `read_${turn}`,
          name: "read_file",
          input: { path: `src/module-${turn}.ts`, bytes: 50_000 + Math.floor(random() * 230_000) },
        },
        {
          type: "tool_call",
          id: `grep_${turn}`,
          name: "grep",
          input: { pattern: `symbol${turn}` },
          usage: usage(20_000 + turn * 500, 300),
          stopReason: "tool_use",
        },
      ],
      [
        {
          role: "assistant",
          content: `${words(80 + Math.floor(random() * 120), random)}.`,
          usage: usage(60_000 + turn * 500, 600),
          stopReason: "end_turn",
        },
      ],
    ];
    await agentLoop(scriptedModel(modelTurns, { record: false }), tools, session);
  }
  await closeSession(session);
  renameSync(writing, logPath);
  log(`wrote ${logPath} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

function words(count: number, random: () => number): string {
  return Array.from({ length: count }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(" ");
}

function sourceText(bytes: number, random: () => number): string {
  const lines: string[] = [];
  let length = 0;
  for (let number = 1; length < bytes; number++) {
    const text = `${"  ".repeat(Math.floor(random() * 4))}${words(3 + Math.floor(random() * 10), random)}; // ${number} "quoted" <tag> & more`;
    lines.push(text);
    length += text.length + 1;
  }
  return lines.join("\n");
}

// mulberry32: small, fast and the same on every machine.
function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}
