import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { expect, it } from "vitest";
import type { Page } from "playwright-core";
import { describeInBrowser, viewerPages } from "./browser.ts";
import { line, messageLine, tempDir } from "./helpers.ts";

const timeout = 120_000;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

// Attributes the page itself writes: anything else on an element came from a session.
const pageAttributes = new Set([
  "class",
  "id",
  "title",
  "href",
  "role",
  "open",
  "tabindex",
  "aria-label",
  "colspan",
  "type",
  "hidden",
]);

// Every element of the timeline: its tag, attribute names (beside data-*) and id, for checks that content never became markup or attributes.
const elementsOf = (page: Page): Promise<{ tag: string; attributes: string[]; id: string }[]> =>
  page.evaluate(`[...document.querySelectorAll("main.timeline *")].map((node) => ({
    tag: node.tagName.toLowerCase(),
    attributes: node.getAttributeNames().filter((name) => !name.startsWith("data-")),
    id: node.id,
  }))`);

/** What a page drawn from hostile entries must show: the turns, no markup, no foreign attributes, no prototype touched. */
async function expectDrawnSafely(page: Page, turns: number): Promise<void> {
  expect(await page.locator("section.turn").count()).toBe(turns);
  expect(await page.locator(".chart g.turn-bars").count()).toBe(turns);
  expect(await page.locator(".totals .total").first().textContent()).toBe(`${turns}turns`);
  const elements = await elementsOf(page);
  expect(
    elements.filter(
      (element) =>
        !["section", "header", "a", "span", "div", "details", "summary", "pre", "code"].includes(element.tag),
    ),
  ).toStrictEqual([]);
  expect(elements.flatMap((element) => element.attributes.filter((name) => !pageAttributes.has(name)))).toStrictEqual(
    [],
  );
  const ids = elements.map((element) => element.id).filter((id) => id !== "");
  expect(ids).toStrictEqual(Array.from({ length: turns }, (_, index) => `turn-${index + 1}`));
  expect(
    await page.evaluate("[window.pwned, ({}).polluted, Object.prototype.polluted, typeof Object.prototype.toString]"),
  ).toStrictEqual([null, null, null, "function"].map((value) => value ?? undefined));
}

describeInBrowser("the viewer page: entries of any shape", () => {
  const { open } = viewerPages();

  it(
    "draws past a thinking message without content and content that is an object; lists both; content stays text",
    async () => {
      const path = join(tempDir(), "odd.jsonl");
      writeFileSync(
        path,
        messageLine({ role: "user", content: "first question" }, "2025-01-01T00:00:00.000Z") +
          messageLine({ type: "thinking", redacted: true }, "2025-01-01T00:00:01.000Z") +
          messageLine(
            { role: "assistant", content: { id: "turn-3", hidden: "" }, usage: { inputTokens: 10, outputTokens: 5 } },
            "2025-01-01T00:00:02.000Z",
          ) +
          messageLine({ role: "user", content: "second question" }, "2025-01-01T00:00:03.000Z") +
          messageLine(
            {
              role: "assistant",
              content: "second answer",
              usage: { inputTokens: 20, outputTokens: 7 },
              stopReason: "end_turn",
            },
            "2025-01-01T00:00:04.000Z",
          ) +
          messageLine({ role: "user", content: "third question" }, "2025-01-01T00:00:05.000Z") +
          messageLine(
            { role: "assistant", content: "third answer", usage: { inputTokens: 30, outputTokens: 9 } },
            "2025-01-01T00:00:06.000Z",
          ),
      );
      const page = await open(path);
      await expectDrawnSafely(page, 3);
      expect(await page.locator(".msg.assistant .text").allTextContents()).toStrictEqual([
        JSON.stringify({ id: "turn-3", hidden: "" }, null, 2),
        "second answer",
        "third answer",
      ]);
      expect(await page.locator("details.thinking .chars").textContent()).toBe("0 chars");
      expect(await page.locator(".totals .total.input .total-value").textContent()).toBe("60");
      expect(await page.locator(".problems li").allTextContents()).toStrictEqual([
        "line 2 a thinking message whose content is missing, not text (shown as it is)",
        "line 3 an assistant message whose content is an object, not text (shown as it is)",
      ]);
      await page.close();
    },
    timeout,
  );

  it(
    "draws every turn whatever JSON value any field holds (random shapes, prototype keys, huge strings), lists each wrong value by line, never as markup or attributes",
    async () => {
      const hostile: Json[] = [
        0,
        -1,
        1.5,
        1e308,
        -0.0001,
        true,
        false,
        null,
        {},
        [],
        [1, "two", { three: 3 }],
        { __proto__: { polluted: true } },
        { constructor: { prototype: { polluted: true } } },
        { toString: "x", valueOf: "y", toJSON: "z" },
        { id: "turn-3", hidden: "" },
        { nodeType: 1, tagName: "IMG", onerror: "window.pwned=1" },
        [[[[[[[[[["deep"]]]]]]]]]],
        "<img src=x onerror=window.pwned=1>",
        "__proto__",
        "constructor",
        "x".repeat(300_000),
      ];
      // A JSON text with a "__proto__" key kept as data (an object literal's would set the prototype).
      const withProtoKey = (value: Json): string => JSON.stringify(value).replace('"polluted-key"', '"__proto__"');
      const bases: { entry: Json; fields: string[] }[] = [
        {
          entry: {
            type: "message",
            message: {
              role: "assistant",
              content: "an answer",
              usage: { inputTokens: 3, outputTokens: 2 },
              stopReason: "end_turn",
            },
          },
          fields: [
            "message",
            "message.role",
            "message.content",
            "message.usage",
            "message.usage.inputTokens",
            "message.stopReason",
            "message.ts",
          ],
        },
        {
          entry: { type: "message", message: { type: "thinking", content: "hmm", redacted: true } },
          fields: ["message.type", "message.content", "message.redacted", "message.ts"],
        },
        {
          entry: {
            type: "message",
            message: {
              type: "tool_call",
              id: "call",
              name: "edit",
              input: { path: "a.txt", oldText: "a\nb", newText: "a\nc" },
              approval: { status: "denied", reason: "no" },
            },
          },
          fields: [
            "message.id",
            "message.name",
            "message.input",
            "message.approval",
            "message.approval.status",
            "message.ts",
          ],
        },
        {
          entry: {
            type: "message",
            message: { type: "tool_result", id: "call", output: "done", isError: true, waitMs: 1500 },
          },
          fields: ["message.id", "message.isError", "message.waitMs", "message.ts"],
        },
        { entry: { type: "message", message: { role: "system", content: "be brief" } }, fields: ["message.content"] },
        { entry: { type: "custom", customType: "workspace", data: { workspace: "/w" } }, fields: ["customType"] },
        {
          entry: { type: "update", index: 0, message: { role: "user", content: "edited" } },
          fields: ["index", "message"],
        },
        {
          entry: {
            type: "splice",
            index: 0,
            removed: [],
            inserted: [],
            details: { summary: "s", tokensBefore: 10, tokensAfter: 1 },
          },
          fields: ["index", "removed", "inserted", "details", "details.summary", "details.tokensBefore"],
        },
      ];
      let log = "";
      let lineNumber = 0;
      const wrongLines: number[] = [];
      const turns = 160;
      // The same draws on every run (a fixed seed), so a failure can be replayed: which entry, which
      // field, and a value that is not of the field's kind, from the list above or any JSON value.
      const draws = fc.sample(
        fc.record({
          base: fc.nat(),
          field: fc.nat(),
          value: fc.oneof(fc.constantFrom(...hostile), fc.jsonValue() as fc.Arbitrary<Json>),
          protoKey: fc.boolean(),
        }),
        { seed: 20251124, numRuns: turns * 2 },
      );
      for (let turn = 0; turn < turns; turn++) {
        log += messageLine({ role: "user", content: `question ${turn + 1}` }, at(turn, 0));
        lineNumber++;
        for (let mutation = 0; mutation < 2; mutation++) {
          const draw = draws[turn * 2 + mutation]!;
          const base = bases[draw.base % bases.length]!;
          const entry = structuredClone(base.entry) as { [key: string]: Json };
          const field = base.fields[draw.field % base.fields.length]!;
          const original = get(entry, field);
          const candidates = hostile.filter((value) => kind(value) !== kind(original));
          set(
            entry,
            field,
            kind(draw.value) !== kind(original) ? draw.value : candidates[draw.field % candidates.length]!,
          );
          if (entry.type === "message" && isRecord(entry.message) && entry.message.ts === undefined)
            entry.message.ts = at(turn, mutation + 1);
          // A key named like a prototype, kept as data, on a field that takes any object.
          if (draw.protoKey && entry.type === "message" && isRecord(entry.message))
            entry.message["polluted-key"] = { polluted: true };
          log += `${withProtoKey(entry)}\n`;
          lineNumber++;
          wrongLines.push(lineNumber);
        }
        log += messageLine(
          { role: "assistant", content: `answer ${turn + 1}`, usage: { inputTokens: 10, outputTokens: 1 } },
          at(turn, 5),
        );
        lineNumber++;
      }
      // Entries of kinds named after prototype members: kept as entries of unknown kind.
      for (const type of ["__proto__", "constructor", "toString", "hasOwnProperty"])
        log += line({ type, message: { role: "user", content: "not a message entry" } });
      const path = join(tempDir(), "fuzzed.jsonl");
      writeFileSync(path, log);

      const page = await open(path);
      await page.locator(`#turn-${turns} .msg.assistant .text`, { hasText: `answer ${turns}` }).waitFor({ timeout });
      await expectDrawnSafely(page, turns);
      const questions = await page.locator(".msg.user .text").allTextContents();
      for (let turn = 1; turn <= turns; turn++) expect(questions).toContain(`question ${turn}`);
      expect(await page.locator(".msg.assistant .text", { hasText: /^answer \d+$/ }).count()).toBe(turns);
      expect(await page.locator(".totals .total.output .total-value").textContent()).not.toBe("");
      // Each entry with a wrong value is listed by its line (the list shows the first 200 problems).
      const listed = new Set(
        (await page.locator(".problems li .line").allTextContents()).map((text) => Number(text.replace("line ", ""))),
      );
      const count = Number((await page.locator(".problems .problem-title").textContent())!.split(" ")[0]);
      expect(count).toBeGreaterThanOrEqual(wrongLines.length);
      for (const wrong of wrongLines.filter((number) => number <= Math.max(...listed)))
        expect(listed, `line ${wrong}`).toContain(wrong);
      expect(await page.locator(".problem-entry").count()).toBe(0);
      await page.close();
    },
    timeout,
  );

  it(
    "an entry that still fails to draw is drawn as a problem in its place, named by its line, and the rest of its turn draws",
    async () => {
      const path = join(tempDir(), "plain.jsonl");
      writeFileSync(path, messageLine({ role: "user", content: "hello" }));
      const page = await open(path);
      // The page's own renderTurn, given an entry that throws when read (no JSON value can: this stands for a bug).
      const drawn = await page.evaluate(`(async () => {
        const { renderTurn } = await import("/assets/render.js");
        const { turnStats } = await import("/assets/turn-stats.js");
        const failing = new Proxy({}, { get() { throw new Error("boom"); } });
        const turn = { index: 1, number: 1, items: [
          { kind: "message", line: 1, turn: 1, message: { role: "user", content: "a question" } },
          { kind: "compaction", line: 2, turn: 1, entry: failing, removed: [], inserted: [] },
          { kind: "message", line: 3, turn: 1, message: { role: "assistant", content: "an answer" } },
        ] };
        const { node, problems } = renderTurn(turn, turnStats(turn));
        return { problems, texts: [...node.querySelectorAll(".text, .problem-entry")].map((child) => child.className + ": " + child.textContent) };
      })()`);
      expect(drawn).toStrictEqual({
        problems: [{ line: 2, message: "could not be drawn: boom" }],
        texts: ["text: a question", "problem-entry: Line 2 could not be drawn: boomL2", "text: an answer"],
      });
      await page.close();
    },
    timeout,
  );
});

function at(turn: number, step: number): string {
  return new Date(Date.UTC(2025, 0, 1) + turn * 60_000 + step * 1000).toISOString();
}

function kind(value: Json | undefined): string {
  return value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
}

function isRecord(value: Json | undefined): value is { [key: string]: Json } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function get(entry: Json, path: string): Json | undefined {
  let value: Json | undefined = entry;
  for (const key of path.split(".")) value = isRecord(value) ? value[key] : undefined;
  return value;
}

function set(entry: { [key: string]: Json }, path: string, value: Json): void {
  const keys = path.split(".");
  let parent: Json | undefined = entry;
  for (const key of keys.slice(0, -1)) parent = isRecord(parent) ? parent[key] : undefined;
  if (isRecord(parent)) parent[keys.at(-1)!] = value;
}
