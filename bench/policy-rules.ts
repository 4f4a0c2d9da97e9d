// The cost of an approval policy's rules per call: matchPolicy with 100 rules (exact names,
// wildcards, globs, prefixes, regexes), on calls that match late or not at all. Run:
// node bench/policy-rules.ts (from the repository root; the sources run with type stripping).
import { matchPolicy, type ApprovalRule, type JsonObject } from "../src/index.ts";

const rules: ApprovalRule[] = [];
for (let index = 0; index < 100; index++) {
  const kind = index % 5;
  if (kind === 0) rules.push({ id: `t${index}`, tool: `tool_${index}`, action: "allow" });
  if (kind === 1) rules.push({ id: `w${index}`, tool: `mcp__server${index}__*`, action: "ask" });
  if (kind === 2)
    rules.push({ id: `g${index}`, tool: "*", input: { path: { glob: `dir${index}/**/*.ts` } }, action: "allow" });
  if (kind === 3)
    rules.push({ id: `p${index}`, tool: "*", input: { command: { prefix: `cmd${index} sub` } }, action: "deny" });
  if (kind === 4)
    rules.push({ id: `r${index}`, tool: "*", input: { url: { regex: `^https://host${index}\\.` } }, action: "ask" });
}
const policy = { rules };
const calls: { name: string; input: JsonObject }[] = [
  { name: "bash", input: { command: "git status && ls -la src", path: "src/a/b/c.ts", url: "https://example.com/x" } },
  { name: "tool_95", input: {} },
  { name: "write", input: { path: "dir42/a/b.ts" } },
];
matchPolicy(policy, calls[0]!);
const rounds = 200_000;
for (const call of calls) {
  for (let index = 0; index < 10_000; index++) matchPolicy(policy, call);
  const started = process.hrtime.bigint();
  for (let index = 0; index < rounds; index++) matchPolicy(policy, call);
  const micros = Number(process.hrtime.bigint() - started) / 1000 / rounds;
  console.log(`${call.name}: ${micros.toFixed(2)} µs per call (100 rules)`);
}
