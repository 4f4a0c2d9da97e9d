// Shared by the examples that need a live model (hello-world, weather, compressor, derive-transform): whether a
// module was executed directly (not imported by a test), and the live model it needs.
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { modelFromEnv, type LiveModel } from "./model-from-env.ts";

/** What to set for a live model; printed when none is configured. */
export const NO_MODEL_MESSAGE =
  "No model configured: set ANTHROPIC_API_KEY (optionally ANTHROPIC_MODEL), or OPENAI_API_KEY or OPENAI_BASE_URL " +
  "(optionally OPENAI_MODEL; e.g. OPENAI_BASE_URL=http://localhost:11434/v1 for a local Ollama).";

/** True when the module at `moduleUrl` (its `import.meta.url`) is the script node was started with. */
export function isMain(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}

/** The live model from the environment; without one, says what to set and exits with code 1. */
export function requireModel(): LiveModel {
  const live = modelFromEnv();
  if (live === undefined) {
    console.error(NO_MODEL_MESSAGE);
    process.exit(1);
  }
  console.error(`Model: ${live.description}\n`);
  return live;
}
