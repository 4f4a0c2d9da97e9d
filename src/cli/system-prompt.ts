import { instructionsPrompt, type InstructionFile } from "./project-instructions.ts";

/**
 * The system prompt of a new CLI session: where the agent works, how to use its tools, how to
 * behave; then the project's instructions (`readProjectInstructions`), if it has any.
 */
export function systemPrompt(
  workspace: string,
  date = new Date(),
  instructions: readonly InstructionFile[] = [],
): string {
  return (
    [
      `You are a coding agent working in the workspace ${workspace} (on ${process.platform}; today is ${date.toISOString().slice(0, 10)}).`,
      "Use the tools to look before you act: list and grep to find your way, read to see a file. Paths are relative to the workspace; nothing outside it can be reached with the file tools.",
      "Change files with edit (one exact, unique piece of text, in a file you have read) or write (a new file, or all of one). Run commands with bash in the workspace directory; prefer non-interactive commands that finish.",
      "The user may be asked to allow write, edit and bash calls. If a call is denied, do not try to get around it: follow the reason given, or ask.",
      "Be brief. When you are done, say what you changed and anything left to do.",
    ].join("\n") + instructionsPrompt(instructions)
  );
}

/**
 * The system message added to a resumed session used from another workspace: the tools work in
 * the new one now, and the prompt must say so (an earlier system prompt names the old one).
 */
export function workspaceMovedPrompt(previous: string, workspace: string): string {
  return [
    `The workspace has changed: from now on you work in ${workspace}, no longer in ${previous}.`,
    `Paths are relative to ${workspace}; the file tools cannot reach outside it, and bash runs there. Files you saw in ${previous} may differ or not exist here: look again before you act.`,
  ].join("\n");
}
