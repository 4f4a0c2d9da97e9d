import { defineConfig } from "vitest/config";

// Tests import the package by name, as users do; the custom condition resolves it to src/ (not a
// stale dist/). Vite applies conditions per environment, and tests run in the server one.
const conditions = ["simple-agent-loop-source", "node", "import", "default"];
const nodeConditions = ["simple-agent-loop-source", "node"];

export default defineConfig({
  resolve: { conditions },
  // Vitest also passes the server conditions to Node (--conditions) for the packages it leaves to
  // Node: "import" there would make a CommonJS package's require() load ESM files (pg's pg-pool).
  // Vite and Node add "import" or "require" themselves, per import.
  ssr: { resolve: { conditions: nodeConditions, externalConditions: nodeConditions } },
  test: {
    include: ["test/**/*.test.ts"],
    // Tests must pass on a slow, noisy machine: generous timeouts, no tight timing assertions.
    testTimeout: 30_000,
    // Finds the browser for the viewer tests once (unpacking a packaged one is not safe in parallel).
    globalSetup: ["test/global-setup.ts"],
  },
});
