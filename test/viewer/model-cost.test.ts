import { describe, expect, it } from "vitest";

// The page's own module, as the browser loads it (plain JavaScript checked with @ts-check).
const page: string = new URL("../../src/viewer/page/model-cost.js", import.meta.url).href;
const { callCost, setPrices } = (await import(page)) as {
  callCost: (model: unknown, usage: unknown) => number | undefined;
  setPrices: (table: unknown) => void;
};

// The page prices calls as the library's priceOf does: own entry, longest prefix, then "".
describe("the viewer page's call cost", () => {
  const usage = { inputTokens: 1_000_000, outputTokens: 0 };
  it("prices a model by its own entry, then the longest key it starts with, then the key ''", () => {
    setPrices({
      "claude-sonnet-4-5": { inputPerMTok: 3, outputPerMTok: 15 },
      claude: { inputPerMTok: 1, outputPerMTok: 5 },
      "": { inputPerMTok: 2, outputPerMTok: 10 },
    });
    expect(callCost("claude-sonnet-4-5-20250929", usage)).toBe(3);
    expect(callCost("claude-haiku", usage)).toBe(1);
    expect(callCost("gpt-5", usage)).toBe(2);
    expect(callCost(undefined, usage)).toBe(2);
  });

  it("knows no cost without a price for the model and no ''", () => {
    setPrices({ claude: { inputPerMTok: 1, outputPerMTok: 5 } });
    expect(callCost("gpt-5", usage)).toBeUndefined();
    expect(callCost(undefined, usage)).toBeUndefined();
  });
});
