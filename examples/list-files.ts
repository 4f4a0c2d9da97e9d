// The smallest agent with a tool, from which the CLI grew: it lists the files of the workspace
// with a `list_files` tool and answers. With ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL
// set it uses that model; otherwise a scripted one, which calls the tool and then reads the tool
// result from the session to write its answer.
//   node_modules/.bin/node --conditions=simple-agent-loop-source examples/list-files.ts [directory]
import { readdir } from "node:fs/promises";
import { agentLoop, formatLogLine, initSession, response, tool, type ModelMessage } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { modelFromEnv } from "./model-from-env.ts";

const workspace = process.argv[2] ?? process.cwd();

const listFiles = tool({
  name: "list_files",
  description: "List the files and directories at the top of the workspace.",
  inputSchema: { type: "object", properties: {}, additionalProperties: false },
  handler: async () => {
    const entries = await readdir(workspace, { withFileTypes: true });
    return entries
      .filter((entry) => !entry.name.startsWith("."))
      .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
      .sort()
      .join(", ");
  },
});

const scripted = scriptedModel([
  [{ type: "tool_call", id: "call_1", name: "list_files", input: {} }],
  (session): ModelMessage[] => {
    const result = session.messages.findLast((message) => "type" in message && message.type === "tool_result");
    const output = result !== undefined && "output" in result ? result.output : "nothing";
    const files = typeof output === "string" ? output : JSON.stringify(output);
    return [{ role: "assistant", content: `The workspace contains ${files}.` }];
  },
]);

const live = modelFromEnv();
const model = live?.invokeModel ?? scripted;
console.error(
  live === undefined
    ? "No model configured (set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL): running on a scripted model.\n"
    : `Model: ${live.description}\n`,
);
const session = initSession("You are a helpful assistant working in a workspace.", "list the files in the workspace");
for (const message of session.messages) console.log(formatLogLine(message, "demo", 400));
await agentLoop(model, [listFiles], session, {
  name: "demo",
  maxIterations: 10,
  onEvent: (event) => {
    if (event.type === "message") console.log(formatLogLine(event.message, "demo", 400));
  },
});
console.log(`\nAnswer: ${response(session)?.content ?? "(none)"}`);
