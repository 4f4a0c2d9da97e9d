import type { TaskOutput } from "./task-output.ts";
import { visibleLine } from "./visible-text.ts";

/**
 * Without a terminal (`--json`, a script) the policy's human is `"deny"`: a call no rule allows is
 * denied (`decidedBy: { by: "policy" }`). Each such denial is also said on `stderr`, with the ways
 * to allow the tool, for the person who runs the script; the model gets the denial as its result.
 */
export function withDenialHints(output: TaskOutput, stderr: NodeJS.WritableStream): TaskOutput {
  return {
    ...output,
    event: (event) => {
      output.event(event);
      if (event.type !== "tool-approval" || event.decidedBy.by !== "policy") return;
      const name = visibleLine(event.name);
      output.pause();
      stderr.write(
        `simple-agent-loop: ${name} was denied: ${visibleLine(event.decidedBy.reason)}; there is no terminal to ask on. Allow it with --allow ${name}, --yes, --mode or a --policy file\n`,
      );
      output.resume();
    },
  };
}
