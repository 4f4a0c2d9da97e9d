// The code-mode agent the Restate tests run (served as `coder` by worker.ts): its model writes one
// program that calls agent-script.ts's tools, so each program call is a journaled step that can
// be held (`tool-<tag>-code.<n>`) and records its effect (`tool <tag>-code.<n>`).
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import {
  codeModeName,
  defineAgent,
  type AgentDefinition,
  type InvokeModel,
  type ModelMessage,
  type Session,
  type ToolDefinition,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { holdAt, scriptTools } from "./agent-script.ts";

/**
 * Turn 0: one code call (`<tag>-code`) whose program looks up three keys in turn (a tag with
 * "approval": deploys between the first two, which needs approval) and returns the values with
 * `Date.now()` and `Math.random()`; turn 1 answers.
 */
export function codeModeScript(tag: string): ModelMessage[][] {
  const deploy = tag.includes("approval") ? ["const deployed = await tools.deploy({ target: 'prod' });"] : [];
  const code = [
    "const a = await tools.lookup({ key: 'alpha' });",
    ...deploy,
    "const b = await tools.lookup({ key: 'beta' });",
    "const c = await tools.lookup({ key: 'gamma' });",
    "return { values: [a.value, b.value, c.value], at: Date.now(), random: Math.random() };",
  ].join("\n");
  return [
    [{ type: "tool_call", id: `${tag}-code`, name: codeModeName, input: { code } }],
    [{ role: "assistant", content: `Done with ${tag}.` }],
  ];
}

/** The model: the turn is read from the session, so any process can answer any turn. */
export function codeModeModel(dir: string): InvokeModel {
  return async (tools, session, context) => {
    const tag = tagOf(session);
    const turn = session.messages.filter((message) => "type" in message && message.type === "tool_result").length;
    appendFileSync(join(dir, "effects"), `model ${tag} ${turn}\n`);
    await holdAt(dir, `model-${tag}-${turn}`, context.signal);
    const model = scriptedModel([codeModeScript(tag)[turn] ?? [{ role: "assistant", content: "(no more turns)" }]]);
    return model(tools, session, context) as ModelMessage[] | Promise<ModelMessage[]>;
  };
}

function tagOf(session: Session): string {
  const last = session.messages.findLast((message) => "role" in message && message.role === "user");
  return last !== undefined && "content" in last && typeof last.content === "string" ? last.content : "untagged";
}

/** The time limit of the handed-to coder's programs (`codeTriage`): short, so a held call outlives it. */
export const coderTimeoutMs = 3000;

/**
 * Code mode on an agent handed to (served as `codeAgents` by worker.ts): `triage` hands every
 * request to `coder` (code mode, `timeoutMs` = `coderTimeoutMs`), whose model writes one program
 * (`<tag>-code`), then answers. A tag with "timeout": the program's second call is caught when it
 * fails (the time limit ends it while it waits, when held), then it makes a third. A tag with
 * "deferred": a `search_tools` call (`<tag>-search`) loads the deferred `find_record` first, and
 * the program calls it twice. Effects:
 * `model coder <tag> <n>` at each of the coder's model calls (point `model-coder-<tag>-<n>`), and
 * the lookups' `tool <tag>-code.<n>`.
 */
export function codeTriage(dir: string): AgentDefinition {
  const coder = defineAgent({
    name: "coder",
    systemPrompt: "You write programs.",
    invokeModel: coderModel(dir),
    tools: coderTools(dir),
    options: { codeMode: { timeoutMs: coderTimeoutMs } },
  });
  return defineAgent({
    name: "triage",
    systemPrompt: "You route requests.",
    invokeModel: (_tools, session) =>
      answered(session, "transfer")
        ? [{ role: "assistant", content: "(triage again)" }]
        : [{ type: "tool_call", id: "transfer", name: "transfer_to_coder", input: {} }],
    handoffs: [coder],
  });
}

function coderModel(dir: string): InvokeModel {
  return async (_tools, session, context) => {
    const tag = tagOf(session);
    // A tag with "deferred": a search loads `find_record` first, and the program calls it.
    if (tag.includes("deferred") && !answered(session, `${tag}-search`))
      return [{ type: "tool_call", id: `${tag}-search`, name: "search_tools", input: { query: "find a record" } }];
    const turn = answered(session, `${tag}-code`) ? 1 : 0;
    appendFileSync(join(dir, "effects"), `model coder ${tag} ${turn}\n`);
    await holdAt(dir, `model-coder-${tag}-${turn}`, context.signal);
    if (turn === 1) return [{ role: "assistant", content: `Done with ${tag}.` }];
    const code = tag.includes("deferred")
      ? [
          "const a = await tools.find_record({ key: 'alpha' });",
          "const b = await tools.find_record({ key: 'beta' });",
          "return { values: [a.value, b.value], tools: Object.keys(tools) };",
        ]
      : tag.includes("timeout")
        ? [
            "const a = await tools.lookup({ key: 'alpha' });",
            "let late = 'answered';",
            "try { await tools.lookup({ key: 'beta' }); } catch (error) { late = String(error); }",
            "const c = await tools.lookup({ key: 'gamma' });",
            "return { values: [a.value, c.value], late };",
          ]
        : [
            "const a = await tools.lookup({ key: 'alpha' });",
            "const b = await tools.lookup({ key: 'beta' });",
            "const c = await tools.lookup({ key: 'gamma' });",
            "return { values: [a.value, b.value, c.value], at: Date.now(), random: Math.random() };",
          ];
    return [{ type: "tool_call", id: `${tag}-code`, name: codeModeName, input: { code: code.join("\n") } }];
  };
}

// The coder's tools: the script's lookup, and the same lookup deferred as `find_record`.
function coderTools(dir: string): ToolDefinition[] {
  const lookup = scriptTools(dir).find((entry) => entry.name === "lookup")!;
  return [lookup, { ...lookup, name: "find_record", description: "Find a record by its key.", deferred: true }];
}

function answered(session: Session, id: string): boolean {
  return session.messages.some((message) => "type" in message && message.type === "tool_result" && message.id === id);
}
