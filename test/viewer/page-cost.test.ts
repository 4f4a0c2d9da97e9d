import { join } from "node:path";
import { expect, it } from "vitest";
import type { Page } from "playwright-core";
import {
  agentLoop,
  contextUsage,
  costOf,
  send,
  type ModelMessage,
  type ModelPrice,
  type Session,
} from "simple-agent-loop";
import { closeSession, openSession } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { describeInBrowser, viewerPages } from "./browser.ts";
import { tempDir } from "./helpers.ts";
import { serveViewer } from "simple-agent-loop/viewer";

const timeout = 60_000;
const prices: Record<string, ModelPrice> = {
  "claude-sonnet-4-5": { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3 },
  "gpt-5": { inputPerMTok: 1.25, outputPerMTok: 10 },
};
const calls = [
  { model: "claude-sonnet-4-5-20250929", usage: { inputTokens: 12_000, outputTokens: 800, cacheReadTokens: 9_000 } },
  { model: "claude-sonnet-4-5-20250929", usage: { inputTokens: 15_000, outputTokens: 300, cacheReadTokens: 12_000 } },
  { model: "gpt-5", usage: { inputTokens: 20_000, outputTokens: 1_000 } },
];

// Two tasks: a tool round trip answered by Claude, then a second task a fallback model (GPT-5)
// answered. The session's estimated context after each, as the library counts it.
async function recordTwoTasks(): Promise<{ path: string; contextAfter: number[]; session: Session }> {
  const path = join(tempDir(), "costs.jsonl");
  const session = await openSession(path);
  send(session, "Read the config and fix the port.");
  const answers: ModelMessage[][] = [
    [
      { type: "thinking", content: "The port is read from the config.", signature: "sig" },
      { type: "tool_call", id: "c1", name: "read", input: { path: "config.json" }, ...calls[0]! },
    ],
    [{ role: "assistant", content: "The port is now 8080.", stopReason: "end_turn", ...calls[1]! }],
    [{ role: "assistant", content: "Added a test.", stopReason: "end_turn", ...calls[2]! }],
  ];
  const model = scriptedModel(answers);
  const toolHandlers = { read: () => JSON.stringify({ port: 80, host: "localhost", retries: 3 }) };
  const contextAfter: number[] = [];
  await agentLoop(model, [], session, { toolHandlers });
  contextAfter.push(contextUsage(session).total);
  send(session, "Now add a test for it.");
  await agentLoop(model, [], session, { toolHandlers });
  contextAfter.push(contextUsage(session).total);
  await closeSession(session);
  return { path, contextAfter, session };
}

const texts = (page: Page, selector: string): Promise<string[]> => page.locator(selector).allTextContents();
const attributes = (page: Page, selector: string, name: string): Promise<(string | null)[]> =>
  page.locator(selector).evaluateAll((nodes, attribute) => nodes.map((node) => node.getAttribute(attribute)), name);

describeInBrowser("the viewer page: models, cost and context", () => {
  const { open } = viewerPages();

  it(
    "shows the model and the cost of each model call, each turn's cost and context, and the session's context by part",
    async () => {
      const { path, contextAfter, session } = await recordTwoTasks();
      const page = await open(path, { viewer: { prices } });
      expect(await texts(page, ".step .step-model")).toStrictEqual(calls.map((call) => call.model));
      const costs = calls.map((call) =>
        costOf(call.usage, call.model === "gpt-5" ? prices["gpt-5"]! : prices["claude-sonnet-4-5"]!),
      );
      expect(await texts(page, ".step .step-cost")).toStrictEqual(costs.map((usd) => `$${usd.toFixed(4)}`));
      // Each turn: its calls' cost, and the context the session had once it was done.
      const metas = await texts(page, ".turn .turn-meta");
      expect(metas[0]).toContain(`$${(costs[0]! + costs[1]!).toFixed(4)}`);
      expect(metas[1]).toContain(`$${costs[2]!.toFixed(4)}`);
      expect((await attributes(page, ".turn .turn-context", "data-tokens")).map(Number)).toStrictEqual(contextAfter);
      // The session: the same estimate as contextUsage, part by part.
      const usage = contextUsage(session);
      expect(Number(await page.locator(".context-usage .context-total").getAttribute("data-tokens"))).toBe(usage.total);
      const shown = await page
        .locator(".context-part")
        .evaluateAll((nodes) =>
          nodes.map((node) => [node.getAttribute("data-part"), Number(node.getAttribute("data-tokens"))]),
        );
      expect(shown).toStrictEqual(
        usage.parts.filter((part) => part.tokens > 0).map((part) => [part.name, part.tokens]),
      );
      expect(await page.locator(".total.cost .total-value").textContent()).toBe(
        `$${costs.reduce((sum, usd) => sum + usd, 0).toFixed(4)}`,
      );
      await page.close();
    },
    timeout,
  );

  it(
    "without prices: the models and the context, no cost anywhere",
    async () => {
      const { path } = await recordTwoTasks();
      const page = await open(path);
      expect(await texts(page, ".step .step-model")).toStrictEqual(calls.map((call) => call.model));
      expect(await page.locator(".step-cost").count()).toBe(0);
      expect(await page.locator(".total.cost").count()).toBe(0);
      expect(await page.locator(".turn .turn-context").count()).toBe(2);
      await page.close();
    },
    timeout,
  );
});

it("serveViewer refuses prices that are not prices, before it listens", async () => {
  const { path } = await recordTwoTasks();
  await expect(serveViewer(path, { prices: { "gpt-5": { inputPerMTok: -1, outputPerMTok: 1 } } })).rejects.toThrow(
    /prices\["gpt-5"\]\.inputPerMTok/,
  );
  await expect(serveViewer(path, { prices: [] as never })).rejects.toThrow(/prices must be an object/);
  await expect(serveViewer(path, { prices: { "gpt-5": { inputPerMTok: 1 } as ModelPrice } })).rejects.toThrow(
    /needs inputPerMTok and outputPerMTok/,
  );
});
