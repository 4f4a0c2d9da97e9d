import { describe, expect, it } from "vitest";
import { jsonLength, surelyWithin } from "../src/shared/json-length.ts";

describe("jsonLength", () => {
  it("is the length of JSON.stringify, escapes and left-out keys included", () => {
    const values: unknown[] = [
      0,
      -0,
      -5,
      10,
      99,
      100,
      123456789012345,
      1.5,
      -2.25e-7,
      1e21,
      Number.NaN,
      "",
      'a"b\\c\n\t\u0001\u001f\u2028',
      "\ud800x",
      "\ud83d\ude00",
      "\udc00",
      [1, "x", null, undefined, () => 1],
      { a: 1, b: undefined, 'k"': [true, false], f: () => 1 },
      { date: new Date(0) },
      { nested: { deep: [[], {}, [{}]] } },
    ];
    for (const value of values) expect(jsonLength(value), JSON.stringify(value)).toBe(JSON.stringify(value)?.length);
  });

  it("with an indent, is the length of JSON.stringify(value, null, indent): line breaks, indentation, spaces after keys", () => {
    const values: unknown[] = [
      7,
      "a\nb",
      [],
      {},
      [1, [2, [3, {}]], { a: [] }],
      { a: 1, b: undefined, 'k"': [true, false], f: () => 1 },
      { only: undefined },
      { date: new Date(0), list: [new Date(1), { at: new Date(2) }] },
      { nested: { deep: [[], {}, [{ x: "\u0001" }]] } },
      [undefined, () => 1, null],
    ];
    for (const indent of [2, 4])
      for (const value of values)
        expect(jsonLength(value, Infinity, indent), JSON.stringify(value)).toBe(
          JSON.stringify(value, null, indent)?.length,
        );
    expect(jsonLength({ list: ["x".repeat(100), "y".repeat(100)] }, 150, 2)).toBeGreaterThan(150);
  });

  it("stops past the limit: a long input is known long without being read whole", () => {
    expect(jsonLength({ text: "x".repeat(300) }, 120)).toBeGreaterThan(120);
    expect(jsonLength({ text: "y".repeat(50) }, 120)).toBe(61);
    // Escapes count: 40 newlines are 80 characters of JSON.
    expect(jsonLength({ text: "\n".repeat(40) }, 80)).toBeGreaterThan(80);
  });

  it("surelyWithin never says a value is within a limit its JSON passes", () => {
    const values: unknown[] = [
      { a: 1, b: 2 },
      { text: "\n".repeat(20) },
      ["x", 1.5e-7, null, true, [{}]],
      { date: new Date(0) },
      { k: undefined, f: () => 1 },
    ];
    for (const value of values)
      for (let limit = 0; limit < 200; limit++)
        if (surelyWithin(value, limit)) expect(JSON.stringify(value).length, `${limit}`).toBeLessThanOrEqual(limit);
    expect(surelyWithin({ a: 1, b: 2 }, 120)).toBe(true);
  });
});
