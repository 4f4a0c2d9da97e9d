import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { modelCallWalk } from "./architecture/model-call-walk.ts";

// `callModelStep` is the list of what happens to one model call, each concern in one home below
// it: a reader following `run` through the call never comes back to a file a third time (the
// guardrails were entered once before the call, once after, and again for their pieces between).
describe("one model call, read top to bottom", () => {
  it("enters no file more than twice", () => {
    const walk = modelCallWalk(fileURLToPath(new URL("..", import.meta.url)));
    expect(walk.size, "files entered").toBeGreaterThan(5);
    const often = [...walk].filter(([, count]) => count > 2).map(([file, count]) => `${file}: ${count}`);
    expect(often, "files entered more than twice").toStrictEqual([]);
  }, 60_000);
});
