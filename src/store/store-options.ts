import { describeValue } from "../errors.ts";
import { StoreError } from "./store-error.ts";

/**
 * Checks the options of `openSession`, `loadSession`, `loadEntries` and `fileStore` where they
 * enter, as the loop checks its own: an object, `sync` one of its modes (a typo such as `"always"`
 * would otherwise mean the default, silently), `onWarning` a function. Throws an
 * `invalid-argument` StoreError naming the function and the option.
 */
export function checkStoreOptions(where: string, options: unknown): void {
  if (typeof options !== "object" || options === null || Array.isArray(options))
    throw invalid(`${where}: options must be an object; got ${describeValue(options)}`);
  const { sync, onWarning } = options as { sync?: unknown; onWarning?: unknown };
  if (sync !== undefined && !syncModes.includes(sync))
    throw invalid(
      `${where}: sync must be one of ${syncModes.map((mode) => JSON.stringify(mode)).join(", ")}; got ${describeValue(sync)}`,
    );
  if (onWarning !== undefined && typeof onWarning !== "function")
    throw invalid(`${where}: onWarning must be a function; got ${describeValue(onWarning)}`);
}

const syncModes: readonly unknown[] = ["turn", "every-entry", "off"];

function invalid(message: string): StoreError {
  return new StoreError(message, { code: "invalid-argument" });
}
