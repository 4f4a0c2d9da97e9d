import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/**
 * The command that starts this CLI where the user is, for the commands the CLI prints (the
 * resume hint, where to list the sessions): `given` when the starter says (`npm start --` from
 * `npm start` in a clone); `npx simple-agent-loop` under npx or an npm script (an app's
 * node_modules/.bin is on the PATH only there); `simple-agent-loop` when the user's PATH has it
 * (a global install or `npm link`); else `npx simple-agent-loop`, which finds an app's local
 * install from its directory.
 */
export function launchCommand(environment: NodeJS.ProcessEnv, given?: string): string {
  if (given !== undefined) return given;
  if (environment.npm_command !== undefined || environment.npm_lifecycle_event !== undefined)
    return "npx simple-agent-loop";
  return onPath("simple-agent-loop", environment.PATH ?? "") ? "simple-agent-loop" : "npx simple-agent-loop";
}

function onPath(name: string, path: string): boolean {
  return path
    .split(delimiter)
    .filter((directory) => directory !== "")
    .some((directory) => {
      try {
        accessSync(join(directory, name), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}
