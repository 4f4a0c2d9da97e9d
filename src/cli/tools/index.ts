import type { Tool } from "../../tools/tool.ts";
import { bashTool, type BashLimits } from "./bash.ts";
import { editTool } from "./edit.ts";
import { grepTool } from "./grep.ts";
import { listTool } from "./list.ts";
import { readTool } from "./read.ts";
import { writeTool } from "./write.ts";
import { createWorkspace, type Workspace } from "./workspace.ts";

/**
 * The coding tools of the CLI, working in the workspace `root` (a real path; see
 * `workspaceRoot`): `read`, `grep`, `list` (read-only), `edit`, `write` (file changes, confined
 * to the workspace, one at a time) and `bash` (a command in the workspace directory, without the
 * CLI's credentials unless `bash.passCredentials` passes them; confined only in `bash.sandbox`,
 * which the CLI sets where bubblewrap runs).
 */
export function codingTools(root: string, options: { bash?: BashLimits; workspace?: Workspace } = {}): Tool[] {
  const workspace = options.workspace ?? createWorkspace(root);
  return [
    readTool(workspace),
    grepTool(workspace),
    listTool(workspace),
    editTool(workspace),
    writeTool(workspace),
    bashTool(workspace, options.bash),
  ];
}

/** The tools that only look: they never need the user's permission. */
export const readOnlyTools: ReadonlySet<string> = new Set(["read", "grep", "list"]);

export { commandEnvironment, isCredentialName } from "./command-environment.ts";
export { killRunningCommands } from "./command-processes.ts";
export { checkToolCall, isCheckedTool } from "./pre-check.ts";
export type { CheckedTool } from "./pre-check.ts";
export { resolveInWorkspace, workspaceRoot } from "./workspace-path.ts";
export { createWorkspace } from "./workspace.ts";
export type { Workspace } from "./workspace.ts";
