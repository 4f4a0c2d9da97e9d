import { checkChoice } from "../numeric-options.ts";
import { errorMessage } from "../errors.ts";
import { CliError } from "./cli-error.ts";

/**
 * How tool calls are allowed. `default`: write, edit, bash and MCP tools ask. `accept-edits`:
 * write and edit run without asking, the rest asks. `plan`: only the read-only tools run; the model
 * proposes a plan (`propose_plan`) which the user accepts before anything changes. `yolo`: every
 * call runs without asking, as `--yes` (meant for a sandboxed bash). In every mode, a write where
 * code runs from is still asked about (`protectedTargets`).
 */
export const permissionModes = ["default", "accept-edits", "plan", "yolo"] as const;
export type PermissionMode = (typeof permissionModes)[number];

/** The mode in use and its changes (`--mode`, Shift-Tab, an accepted plan). */
export type ModeControl = {
  current: () => PermissionMode;
  set: (mode: PermissionMode) => void;
  /** The next mode in `permissionModes`' order, wrapping around (Shift-Tab): returns it. */
  cycle: () => PermissionMode;
};

/** A `ModeControl` starting at `first`; `onChange` is told each new mode. */
export function modeControl(first: PermissionMode, onChange: (mode: PermissionMode) => void = () => {}): ModeControl {
  let current = first;
  const set = (mode: PermissionMode): void => {
    if (mode === current) return;
    current = mode;
    onChange(mode);
  };
  return {
    current: () => current,
    set,
    cycle: () => {
      set(permissionModes[(permissionModes.indexOf(current) + 1) % permissionModes.length]!);
      return current;
    },
  };
}

/** `--mode`'s value, checked like every option that takes one of a few strings (a usage `CliError` otherwise). */
export function parsePermissionMode(value: string, option = "--mode"): PermissionMode {
  try {
    checkChoice(option, value, permissionModes);
  } catch (error) {
    throw new CliError(errorMessage(error), "usage");
  }
  return value as PermissionMode;
}
