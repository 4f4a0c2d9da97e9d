// A workspace and a stored session worked in by the CLI's file tools, with checkpoints recorded
// as the CLI records them, driven by a scripted model: for the rewind tests (and their crash child).
import { join } from "node:path";
import { agentLoop, send, type JsonObject, type ModelMessage, type Session } from "simple-agent-loop";
import { closeSession, fileStore, type FileStore } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { checkpointRecorder } from "../../src/cli/checkpoints.ts";
import { codingTools, createWorkspace } from "../../src/cli/tools/index.ts";
import { blobDirectory, fileBlobStore, type BlobStore } from "../../src/store/blobs.ts";
import { tempDirectory } from "./helpers.ts";

export const sessionId = "20260101-000000-abcdef";

export type AgentWorkspace = {
  root: string;
  /** The CLI's home (`SIMPLE_AGENT_LOOP_HOME`): the session is in its `sessions`. */
  home: string;
  store: FileStore;
  session: Session;
  blobs: BlobStore;
  logPath: string;
  /** Runs one task: `text` as the user's message, the model answering with `turns`, then "done". */
  task: (text: string, ...turns: ModelMessage[][]) => Promise<void>;
  remove: () => Promise<void>;
};

export async function agentWorkspace(): Promise<AgentWorkspace> {
  const root = tempDirectory("rewind-workspace-");
  const home = tempDirectory("rewind-sessions-");
  const store = fileStore(join(home.path, "sessions"));
  const session = await store.open(sessionId);
  const logPath = store.path(sessionId);
  const blobs = fileBlobStore(blobDirectory(logPath), { sync: true });
  const recorder = checkpointRecorder(blobs);
  const tools = codingTools(root.path, {
    workspace: createWorkspace(root.path, { onFileChange: recorder.onFileChange }),
    bash: { defaultTimeoutMs: 20_000, killGraceMs: 500 },
  });
  return {
    root: root.path,
    home: home.path,
    store,
    session,
    blobs,
    logPath,
    task: async (text, ...turns) => {
      send(session, text);
      const model = scriptedModel([...turns, [{ role: "assistant", content: `done: ${text}` }]]);
      await agentLoop(model, tools, session, { hooks: { afterToolCall: ({ result }) => recorder.attach(result) } });
    },
    remove: async () => {
      await closeSession(session);
      root.remove();
      home.remove();
    },
  };
}

let nextCall = 0;

/** A model turn calling one tool. */
export function call(name: string, input: JsonObject): ModelMessage[] {
  return [{ type: "tool_call", id: `call_${++nextCall}`, name, input }];
}
