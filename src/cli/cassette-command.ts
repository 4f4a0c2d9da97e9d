import { errorMessage } from "../errors.ts";
import { cassetteDiff } from "../testing/cassette-diff.ts";
import { visibleText } from "./visible-text.ts";

type Output = { write(text: string): unknown };

/**
 * `simple-agent-loop cassette diff <a> <b>`: what changed between two recordings, for a PR check.
 * Exit 0 when they record the same run, 1 when they differ, 2 for a usage error (or an unreadable file).
 * `cassette --help` prints the usage (exit 0).
 */
export async function runCassetteCommand(
  argv: readonly string[],
  io: { stdout: Output; stderr: Output },
): Promise<number> {
  const usage = "Usage: simple-agent-loop cassette diff <a.jsonl> <b.jsonl>\n";
  if (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h")) {
    io.stdout.write(usage);
    return 0;
  }
  if (argv[0] !== "diff" || argv.length !== 3) {
    io.stderr.write(usage);
    return 2;
  }
  let differences;
  try {
    differences = await cassetteDiff(argv[1]!, argv[2]!);
  } catch (error) {
    io.stderr.write(`simple-agent-loop cassette diff: ${visibleText(errorMessage(error))}\n`);
    return 2;
  }
  if (differences.length === 0) {
    io.stdout.write("the recordings are the same run\n");
    return 0;
  }
  for (const difference of differences) io.stdout.write(`${visibleText(difference.line)}\n`);
  return 1;
}
