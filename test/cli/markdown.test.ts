// Markdown answers rendered for the terminal, whole or as they stream.
import { describe, expect, it } from "vitest";
import type { Style } from "../../src/cli/ansi.ts";
import { markdownRenderer, renderMarkdown } from "../../src/cli/markdown.ts";

// Styles as visible tags, so the tests read what the terminal would show.
const tags: Style = {
  bold: (text) => `<b>${text}</b>`,
  dim: (text) => `<d>${text}</d>`,
  italic: (text) => `<i>${text}</i>`,
  red: (text) => `<r>${text}</r>`,
  green: (text) => `<g>${text}</g>`,
  yellow: (text) => `<y>${text}</y>`,
  cyan: (text) => `<c>${text}</c>`,
};

const answer = [
  "# Plan",
  "",
  "Use **strong** words, *emphasis*, _this too_ and `inline code`; keep snake_case_names and 2 * 3 * 4.",
  "- first item",
  "  * nested, see [the docs](https://example.com/docs)",
  "1. numbered",
  "- [x] done",
  "> quoted **text**",
  "---",
  "```ts",
  "const x = **not bold** * 2; // # not a heading",
  "```",
  "After the `code`.",
].join("\n");

const rendered = [
  "<b>Plan</b>",
  "",
  "Use <b>strong</b> words, <i>emphasis</i>, <i>this too</i> and <c>inline code</c>; keep snake_case_names and 2 * 3 * 4.",
  "<d>•</d> first item",
  "  <d>•</d> nested, see the docs <d>(https://example.com/docs)</d>",
  "<d>1.</d> numbered",
  "<d>•</d> ☑ done",
  "<d>│</d> quoted <b>text</b>",
  `<d>${"─".repeat(40)}</d>`,
  "<d>```ts</d>",
  "<c>const x = **not bold** * 2; // # not a heading</c>",
  "<d>```</d>",
  "After the <c>code</c>.",
].join("\n");

describe("renderMarkdown", () => {
  it("renders headings, emphasis, code, lists, quotes, rules and code blocks for the terminal", () => {
    expect(renderMarkdown(answer, tags)).toBe(rendered);
  });

  it("shows the text's own control characters as visible escapes and only adds its own styles", () => {
    expect(renderMarkdown("\x1b[31mred\x1b]0;title\x07 **x**", tags)).toBe("^[[31mred^[]0;title^G <b>x</b>");
    expect(renderMarkdown("```\n\x1b[2Jcode\n```", tags)).toBe("<d>```</d>\n<c>^[[2Jcode</c>\n<d>```</d>");
  });
});

describe("markdownRenderer", () => {
  it("renders a stream the same as the whole text, however it is cut", () => {
    const texts = [
      answer,
      "a *b* c **d e** f `g h` i [j k](l) m\n",
      "```\ncode **x**\n```\n**after**",
      "no line break at the end **bold**",
      "Sizes:\n| file | size |\n|:--|--:|\n| `a.ts` | 12 |\n| b\\|c.ts | 3 |\nafter",
      "| a | b |\n|---|---|\n| 1 | 2 |",
    ];
    for (const text of texts) {
      for (const size of [1, 2, 3, 5, 7, 13]) {
        const renderer = markdownRenderer(tags);
        let out = "";
        for (let start = 0; start < text.length; start += size) out += renderer.push(text.slice(start, start + size));
        out += renderer.end();
        expect(sameOnScreen(out), `pieces of ${size}`).toBe(sameOnScreen(renderMarkdown(text, tags)));
      }
    }
  });

  it("renders random Markdown-like streams the same as the whole text, cut anywhere", () => {
    let seed = 7;
    const random = (below: number): number => (seed = (seed * 1103515245 + 12345) % 2147483648) % below;
    const tokens = [
      "**",
      "*",
      "_",
      "__",
      "`",
      "\\",
      "[",
      "](x)",
      "# ",
      "- ",
      "1. ",
      "> ",
      "```",
      "~~",
      "\n",
      " ",
      "  ",
      "word",
      "snake_case",
      "x",
      "é",
      ".",
      "[ ] ",
      "[x] ",
      "| ",
      " |",
      "|---|",
      ":-:|",
    ];
    for (let document = 0; document < 5000; document++) {
      let text = "";
      for (let count = random(30) + 1; count > 0; count--) text += tokens[random(tokens.length)];
      const renderer = markdownRenderer(tags);
      let out = "";
      for (let start = 0, size = random(6) + 1; start < text.length; start += size, size = random(6) + 1)
        out += renderer.push(text.slice(start, start + size));
      out += renderer.end();
      expect(sameOnScreen(out), JSON.stringify(text)).toBe(sameOnScreen(renderMarkdown(text, tags)));
    }
  });

  it("renders a table with its columns aligned, held back until its last row", () => {
    const text = [
      "| file | lines | note |",
      "|:-----|------:|:----:|",
      "| `src/a.ts` | 12 | **new** |",
      "| b\\|c | 1234 | 日本 |",
      "",
      "Done.",
    ].join("\n");
    expect(renderMarkdown(text, tags).split("\n")).toStrictEqual([
      "<b>file</b>    <d> │ </d><b>lines</b><d> │ </d><b>note</b>",
      "<d>─────────┼───────┼─────</d>",
      "<c>src/a.ts</c><d> │ </d>   12<d> │ </d><b>new</b>",
      "b|c     <d> │ </d> 1234<d> │ </d>日本",
      "",
      "Done.",
    ]);
    const renderer = markdownRenderer(tags);
    expect(renderer.push("| a | b |\n|---|---|\n| 1 ")).toBe("");
    expect(renderer.push("| 2 |\nnext line")).toBe("");
    expect(renderer.push("\n")).toBe("<b>a</b><d> │ </d><b>b</b>\n<d>──┼──</d>\n1<d> │ </d>2\nnext line\n");
    // A line of pipes that no delimiter row follows is text after all.
    expect(renderMarkdown("| not | a table |\nplain", tags)).toBe("| not | a table |\nplain");
  });

  it("shows a line's words before the line ends, but holds back what is still open", () => {
    const renderer = markdownRenderer(tags);
    expect(renderer.push("The first words of a long")).toBe("The first words of a long");
    expect(renderer.push(" line with **bold te")).toBe(" line with ");
    expect(renderer.push("xt** and")).toBe("<b>bold text</b> and");
    expect(renderer.push(" more\n- [")).toBe(" more\n");
    expect(renderer.push(" ] a task\n```")).toBe("<d>•</d> ☐ a task\n");
    expect(renderer.push("js\nlet a = 1;")).toBe("<d>```js</d>\n<c>let a = 1;</c>");
    expect(renderer.push("\n```\n")).toBe("\n<d>```</d>\n");
    expect(renderer.end()).toBe("");
  });

  it("forgets held-back text and an open code block on reset", () => {
    const renderer = markdownRenderer(tags);
    renderer.push("```\nin code\npartial `x");
    renderer.reset();
    expect(renderer.push("**fresh**\n")).toBe("<b>fresh</b>\n");
  });
});

// Styled pieces side by side look the same as one styled piece; an empty one looks like nothing.
function sameOnScreen(text: string): string {
  return text.replace(/<\/(\w)><\1>/g, "").replace(/<(\w)><\/\1>/g, "");
}

describe("streaming costs linear work in the input, whatever its shape", () => {
  // Characters that string searches and regular expressions were handed while `run` ran: a
  // count of work that does not depend on how loaded the machine is.
  function scanned(run: () => void): number {
    // The originals, put back afterwards (called with their `this` through call()).
    // eslint-disable-next-line @typescript-eslint/unbound-method
    const indexOf = String.prototype.indexOf;
    // eslint-disable-next-line @typescript-eslint/unbound-method
    const exec = RegExp.prototype.exec;
    let characters = 0;
    String.prototype.indexOf = function (this: string, search: string, position?: number) {
      characters += this.length - (position ?? 0);
      return indexOf.call(this, search, position);
    };
    RegExp.prototype.exec = function (this: RegExp, text: string) {
      characters += text.length - (this.global || this.sticky ? this.lastIndex : 0);
      return exec.call(this, text);
    };
    try {
      run();
    } finally {
      String.prototype.indexOf = indexOf;
      RegExp.prototype.exec = exec;
    }
    return characters;
  }

  const shapes: Record<string, (index: number) => string> = {
    "words on one line": () => "word ",
    "a line held back: JSON starting with {": (index) => (index === 0 ? '{"items": [' : '"x", '),
    "a line held back: an open code span": (index) => (index === 0 ? "`" : "code "),
    "a code block": (index) => (index === 0 ? "```\n" : "x = 1 "),
  };
  for (const [shape, piece] of Object.entries(shapes))
    it(`${shape}: twice the pieces, about twice the work`, () => {
      const work = (count: number): number =>
        scanned(() => {
          const renderer = markdownRenderer(tags);
          for (let index = 0; index < count; index++) renderer.push(piece(index));
          renderer.end();
        });
      const once = work(5_000);
      const twice = work(10_000);
      // Linear: a ratio of 2 (a little more for rounding); quadratic: 4.
      expect(twice / once).toBeLessThan(2.5);
    });
});
