// A durable agent worker for a local Restate server (see docs/restate.md):
//   npx restate-server                                                                     # terminal 1
//   node_modules/.bin/node --conditions=simple-agent-loop-source examples/restate-worker.ts  # terminal 2
// It serves the agent on :9080 and registers itself with the server's admin API (:9070), then:
//   curl localhost:8080/agent/demo/run/send --json '{"message": "Deploy version 1.2 to staging"}'  # async: it will wait for approval
//   curl localhost:8080/agent/demo/pendingApprovals --json '{}'
//   curl localhost:8080/agent/demo/resolveApproval --json '{"id": "deploy_1", "approved": true}'
//   curl localhost:8080/agent/demo/export --json '{}'                            # the session, as JSONL
// With ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL set it uses that model; otherwise a
// scripted one whose turn depends only on the session, as a durable run's model must on replay.
import * as restate from "@restatedev/restate-sdk";
import { isToolResult, tool, type InvokeModel } from "simple-agent-loop";
import { restateAgent } from "simple-agent-loop/restate";
import { modelFromEnv } from "./model-from-env.ts";

const port = Number(process.env.PORT ?? 9080);
const adminUrl = process.env.RESTATE_ADMIN_URL ?? "http://localhost:9070";

const checkStatus = tool({
  name: "check_status",
  description: "The versions running in an environment.",
  inputSchema: { type: "object", properties: { env: { type: "string" } }, required: ["env"] },
  handler: ({ env }) => ({ env, version: "1.1", healthy: true }),
});

// A side effect: every call waits for a human, for as long as it takes (the invocation suspends).
const deploy = tool({
  name: "deploy",
  description: "Deploy a version to an environment.",
  inputSchema: {
    type: "object",
    properties: { env: { type: "string" }, version: { type: "string" } },
    required: ["env", "version"],
  },
  requireApproval: true,
  eager: false,
  handler: ({ env, version }) => `deployed ${String(version)} to ${String(env)}`,
});

// The turn is read from the session (results since the last user message), never from a counter:
// a replayed or moved run must get the same answer. Ids carry the user message's number.
const scripted: InvokeModel = async (_tools, session) => {
  const users = session.messages.filter((message) => "role" in message && message.role === "user").length;
  const lastUser = session.messages.findLastIndex((message) => "role" in message && message.role === "user");
  const results = session.messages.slice(lastUser).filter(isToolResult);
  if (results.length === 0)
    return [
      {
        type: "tool_call",
        id: `status_${users}`,
        name: "check_status",
        input: { env: "staging" },
        stopReason: "tool_use",
      },
    ];
  if (results.length === 1)
    return [
      {
        type: "tool_call",
        id: `deploy_${users}`,
        name: "deploy",
        input: { env: "staging", version: "1.2" },
        stopReason: "tool_use",
      },
    ];
  return [
    {
      role: "assistant",
      content: `Deploy result: ${JSON.stringify(results[1]?.output ?? null)}`,
      stopReason: "end_turn",
    },
  ];
};

const agent = restateAgent({
  name: "agent",
  invokeModel: modelFromEnv()?.invokeModel ?? scripted,
  tools: [checkStatus, deploy],
});
await restate.endpoint().bind(agent).listen(port);

// Registering is idempotent (`force`); retried while the server starts.
for (let attempt = 0; ; attempt++) {
  const reply = await fetch(`${adminUrl}/deployments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ uri: `http://localhost:${port}`, force: true }),
  }).catch((error: unknown) => error as Error);
  if (!(reply instanceof Error) && reply.ok) break;
  if (attempt === 30)
    throw new Error(
      `could not register with ${adminUrl}: ${reply instanceof Error ? reply.message : `HTTP ${reply.status} ${await reply.text()}`}`,
    );
  await new Promise((resolve) => setTimeout(resolve, 1000));
}
console.error(`agent worker on :${port}, registered with ${adminUrl}`);
