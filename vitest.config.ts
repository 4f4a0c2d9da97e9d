import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["simple-agent-loop-source"] },
  test: {
    include: ["test/**/*.test.ts"],
    // Tests must pass on a slow, noisy machine: generous timeouts, no timing assertions tighter than 10x.
    testTimeout: 30_000,
  },
});
