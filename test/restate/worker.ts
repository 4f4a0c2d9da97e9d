// A worker process for the Restate tests: serves the script agent (agent-script.ts), and the
// script agents (agents-script.ts) as the object `agents`, on a free
// loopback port and prints `{"port":N}` once it listens.
//   node --conditions=simple-agent-loop-source test/restate/worker.ts <control dir>
import * as restate from "@restatedev/restate-sdk";
import { defineAgent } from "simple-agent-loop";
import { restateAgent } from "simple-agent-loop/restate";
import { scriptClassifier, scriptGuardrails, scriptModel, scriptTools } from "./agent-script.ts";
import { scriptTriage } from "./agents-script.ts";
import { shotsMaxStepBytes, shotsModel, shotsTools } from "./shots-script.ts";
import { codeModeModel, codeTriage } from "./code-mode-script.ts";
import { tasksModel, tasksTools } from "./tasks-script.ts";
import { depthModel, depthPrices, depthTools, vault } from "./tasks-depth-script.ts";

const [dir] = process.argv.slice(2);
if (dir === undefined) throw new Error("usage: worker.ts <control dir>");
const agent = restateAgent({
  name: "agent",
  invokeModel: scriptModel(dir),
  tools: scriptTools(dir),
  options: { parallel: true, guardrails: scriptGuardrails(dir) },
});
const depthSetup = {
  modelRetry: { maxRetryAttempts: 2, initialRetryInterval: { milliseconds: 50 } },
  options: { parallel: true, guardrails: { toolOutput: [vault(dir)] }, budget: { usd: 0.06 }, prices: depthPrices },
};
const port = await restate
  .endpoint()
  .setLogger((meta, message, ...rest) => {
    if (String(meta.level) === "error") console.error(message, ...rest);
  })
  .bind(agent)
  // The same worker serves agents that hand off to each other (agents-script.ts).
  .bind(restateAgent({ name: "agents", agent: scriptTriage(dir) }))
  // The script agent with every call judged by a classifier (agent-script.ts).
  .bind(
    restateAgent({
      name: "judged",
      invokeModel: scriptModel(dir),
      tools: scriptTools(dir),
      options: { approvalPolicy: { classifier: scriptClassifier(dir) } },
    }),
  )
  // The handoff agents with each specialist's calls judged by the classifier (agents-script.ts).
  .bind(
    restateAgent({
      name: "judgedAgents",
      agent: scriptTriage(dir, { approvalPolicy: { classifier: scriptClassifier(dir) } }),
    }),
  )
  // A tool whose screenshot outgrows a step (shots-script.ts).
  .bind(
    restateAgent({
      name: "shots",
      invokeModel: shotsModel(dir),
      tools: shotsTools(dir),
      maxStepBytes: shotsMaxStepBytes,
    }),
  )
  // The script's tools called from a code-mode program (code-mode-script.ts).
  .bind(
    restateAgent({
      name: "coder",
      invokeModel: codeModeModel(dir),
      tools: scriptTools(dir),
      options: { codeMode: true },
    }),
  )
  // Code mode on an agent handed to, with a short program time limit (code-mode-script.ts).
  .bind(restateAgent({ name: "codeAgents", agent: codeTriage(dir) }))
  // Background tasks (tasks-script.ts).
  .bind(restateAgent({ name: "tasks", invokeModel: tasksModel(), tools: tasksTools(dir) }))
  // Background tasks with the task tools, failures, approvals, guardrails and a budget
  // (tasks-depth-script.ts), as a loop and as a run of agents.
  .bind(restateAgent({ name: "taskDepth", invokeModel: depthModel(dir), tools: depthTools(dir), ...depthSetup }))
  .bind(
    restateAgent({
      name: "taskDepthLimit",
      invokeModel: depthModel(dir),
      tools: depthTools(dir),
      ...depthSetup,
      options: { ...depthSetup.options, maxIterations: 2 },
    }),
  )
  .bind(
    restateAgent({
      name: "taskDepthAgents",
      agent: defineAgent({
        name: "depth",
        systemPrompt: "Depth.",
        invokeModel: depthModel(dir),
        tools: depthTools(dir),
      }),
      ...depthSetup,
    }),
  )
  .listen(0);
process.stdout.write(`${JSON.stringify({ port })}\n`);
