import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { matchPolicy, type ApprovalRule } from "simple-agent-loop";

const action = fc.constantFrom<ApprovalRule["action"]>("allow", "deny", "ask");
const word = fc.constantFrom("git", "status", "rm", "ls", "-rf", "~", "x", "push", "npm");
const separator = fc.constantFrom(" ", " ; ", " && ", " | ", " `", " $(", " > ", "\n", " & ", " < ");
const command = fc
  .array(fc.tuple(word, separator), { minLength: 1, maxLength: 6 })
  .map((parts) => parts.map(([text, between]) => text + between).join(""));
const rule = fc.record({
  tool: fc.constantFrom("bash", "*", "b*", "read"),
  prefix: fc.option(
    fc.array(word, { minLength: 1, maxLength: 2 }).map((words) => words.join(" ")),
    { nil: undefined },
  ),
  action,
});
const rules = fc
  .array(rule, { minLength: 1, maxLength: 8 })
  .map((list) =>
    list.map(({ tool, prefix, action: act }, index): ApprovalRule =>
      prefix === undefined
        ? { id: `r${index}`, tool, action: act }
        : { id: `r${index}`, tool, action: act, input: { command: { prefix } } },
    ),
  );

describe("matchPolicy (property)", () => {
  it("the action decided does not depend on the order of the rules", () => {
    fc.assert(
      fc.property(rules, command, fc.integer(), (list, text, seed) => {
        const shuffled = [...list].sort(
          (left, right) => ((left.id.length * seed) % 7) - ((right.id.length * seed) % 7) || (seed % 2 === 0 ? -1 : 1),
        );
        const reversed = [...list].reverse();
        const call = { name: "bash", input: { command: text } };
        const actions = [list, shuffled, reversed].map((order) => matchPolicy({ rules: order }, call)?.action);
        expect(new Set(actions).size).toBe(1);
      }),
      { numRuns: 300 },
    );
  });

  it("a matching deny always wins; an allow never matches a command that chains or substitutes", () => {
    fc.assert(
      fc.property(rules, command, (list, text) => {
        const call = { name: "bash", input: { command: text } };
        const decided = matchPolicy({ rules: list }, call);
        const denies = list.filter((entry) => entry.action === "deny");
        const anyDeny = denies.some((entry) => matchPolicy({ rules: [entry] }, call) !== undefined);
        if (anyDeny) expect(decided?.action).toBe("deny");
        const chained = /[;&|`<>\n]|\$\(/.test(text);
        for (const entry of list.filter((candidate) => candidate.action === "allow" && candidate.input !== undefined))
          if (chained) expect(matchPolicy({ rules: [entry] }, call)).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });
});
