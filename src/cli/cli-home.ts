import { homedir } from "node:os";
import { join } from "node:path";

/** The CLI's own directory: `$SIMPLE_AGENT_LOOP_HOME`, default `~/.simple-agent-loop`. */
export function cliHome(environment: NodeJS.ProcessEnv): string {
  return environment.SIMPLE_AGENT_LOOP_HOME || join(homedir(), ".simple-agent-loop");
}
