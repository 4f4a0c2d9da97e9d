/**
 * Why a program's calls still in flight were stopped: the program ended first (its time limit, an
 * error it threw, `maxCalls`). The reason their signal is aborted with, so a durable run can
 * journal such a call as stopped by its program rather than answered: on a replay it then waits
 * for its program to end again, as it did, instead of letting the program go further. An abort
 * like any other to everything else (`name` "AbortError"): the call's result says it was aborted.
 */
export class ProgramStop extends Error {
  override name = "AbortError";
}
