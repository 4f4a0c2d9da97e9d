/**
 * A failure the CLI reports to the user as one message and an exit code, without a stack trace:
 * `usage` (exit 2) for arguments it cannot make sense of, `error` (exit 1) for everything else
 * (no model configured, a session that does not exist).
 */
export class CliError extends Error {
  override name = "CliError";
  readonly exitCode: 1 | 2;

  constructor(message: string, kind: "usage" | "error" = "error") {
    super(message);
    this.exitCode = kind === "usage" ? 2 : 1;
  }
}

/** True for a `CliError`, also from another copy of this module. */
export function isCliError(error: unknown): error is CliError {
  return (
    error instanceof Error &&
    error.name === "CliError" &&
    typeof (error as { exitCode?: unknown }).exitCode === "number"
  );
}
