import { parseArgs } from "node:util";
import { errorMessage } from "../errors.ts";
import { CliError } from "./cli-error.ts";
import { parsePermissionMode } from "./permission-mode.ts";
import { effectivePolicy } from "./policy-presets.ts";
import { visibleJson } from "./visible-text.ts";

/** What `policy --help` prints. */
export const policyUsage = `Usage: simple-agent-loop policy [--mode <mode>] [--policy <file>] [--json]

Prints, as JSON, the approval policy a run would use: the mode's preset (default, accept-edits,
plan or yolo) and the rules of the --policy file, with human "deny" when there is no terminal
to ask on. A malformed file exits 2, naming the rule and the field.`;

/**
 * `simple-agent-loop policy [--mode m] [--policy f] --json`: prints the effective approval policy
 * (the mode's preset and the file's rules) as JSON. Exit 2 for a malformed file, naming the problem.
 * `--help` prints `policyUsage`.
 */
export function runPolicyCommand(
  argv: readonly string[],
  io: { stdout: { write: (text: string) => unknown }; stdin: { isTTY?: boolean } },
): number {
  let values: {
    mode?: string | undefined;
    policy?: string | undefined;
    json?: boolean | undefined;
    help?: boolean | undefined;
  };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        mode: { type: "string" },
        policy: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    throw new CliError(`policy: ${errorMessage(error)}`, "usage");
  }
  if (values.help === true) {
    io.stdout.write(`${policyUsage}\n`);
    return 0;
  }
  const mode = parsePermissionMode(values.mode ?? "default");
  const policy = effectivePolicy({
    mode,
    ...(values.policy === undefined ? {} : { file: values.policy }),
    terminal: io.stdin.isTTY === true,
  });
  // The policy is data: JSON is its one form (`--json` says so for scripts); a file's strings escaped.
  io.stdout.write(`${visibleJson(policy)}\n`);
  return 0;
}
