// The same script agent run by the in-process loop: what a durable run must end with.
import { mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentLoop, initSession, type Session } from "simple-agent-loop";
import { scriptModel, scriptTools } from "./agent-script.ts";

export const systemPrompt = "You look things up.";

/** Runs the script for `tag` in process; `abortAt`: a tool call id whose tool is held, then the run aborted there. */
export async function inProcessRun(tag: string, options: { abortAt?: string } = {}): Promise<Session> {
  const dir = mkdtempSync(join(tmpdir(), "simple-agent-loop-restate-baseline-"));
  try {
    writeFileSync(join(dir, "effects"), "");
    const controller = new AbortController();
    if (options.abortAt !== undefined) {
      writeFileSync(join(dir, `hold-tool-${options.abortAt}`), "");
      const marker = join(dir, `at-tool-${options.abortAt}`);
      const timer = setInterval(() => {
        if (existsSync(marker)) {
          clearInterval(timer);
          controller.abort();
        }
      }, 10);
    }
    const session = initSession(systemPrompt, tag);
    await agentLoop(scriptModel(dir), scriptTools(dir), session, { signal: controller.signal });
    return session;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
