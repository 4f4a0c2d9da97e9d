// The file store's list with a status filter: 1,000 sessions of 100 turns (about 330 KB each), one
// in 50 paused for approval, and the time to list the paused ones (a page of 50 scans them all).
//   node --conditions=simple-agent-loop-source bench/file-store-list.ts [sessions]
import { copyFileSync, mkdtempSync, rmSync, statSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentLoop, extendSession, tool } from "../src/index.ts";
import { closeSession, fileStore } from "../src/store/index.ts";
import { scriptedModel } from "../src/testing/index.ts";

const sessions = Number(process.argv[2] ?? 1000);
const directory = mkdtempSync(join(tmpdir(), "file-list-bench-"));
const store = fileStore(directory);

const read = tool({
  name: "read",
  description: "reads a page",
  inputSchema: { type: "object", properties: { page: { type: "number" } } },
  handler: ({ page }) => `page ${String(page)}: ${"r".repeat(1500)}`,
});
const write = tool({
  name: "write",
  description: "writes",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
  requireApproval: true,
  handler: () => "written",
});

// Two templates: 100 turns ending done, and the same ending with a call waiting for approval.
async function template(id: string, paused: boolean): Promise<string> {
  const turns = Array.from({ length: 100 }, (_, index) => [
    { role: "assistant" as const, content: `step ${index} ${"t".repeat(1500)}` },
    { type: "tool_call" as const, id: `c${index}`, name: "read", input: { page: index } },
  ]);
  const last = paused
    ? [{ type: "tool_call" as const, id: "w", name: "write", input: { text: "end" } }]
    : [{ role: "assistant" as const, content: "Done." }];
  const session = await store.open(id);
  extendSession(session, { role: "user", content: "read everything" });
  await agentLoop(scriptedModel([...turns, last]), [read, write], session, {
    maxIterations: 200,
    compaction: false,
  });
  await closeSession(session);
  return store.path(id);
}

const done = await template("template-done", false);
const paused = await template("template-paused", true);
const now = Date.now() / 1000;
for (let index = 0; index < sessions; index++) {
  const file = store.path(`s${index}`);
  copyFileSync(index % 50 === 0 ? paused : done, file);
  utimesSync(file, now - index, now - index);
}
rmSync(done);
rmSync(paused);

const perSession = statSync(store.path("s1")).size;
await store.list({ status: "paused", limit: 50 });
const rounds = 5;
const start = performance.now();
let found = 0;
for (let round = 0; round < rounds; round++) found = (await store.list({ status: "paused", limit: 50 })).length;
const listMs = (performance.now() - start) / rounds;
const firstStart = performance.now();
await store.list({ limit: 50 });
const firstPageMs = performance.now() - firstStart;
console.log(
  `file store, ${sessions} sessions of ${Math.round(perSession / 1024)} KB: list({ status: "paused" }) ${listMs.toFixed(0)} ms (${found} found), first page of 50 ${firstPageMs.toFixed(0)} ms`,
);
rmSync(directory, { recursive: true, force: true });
