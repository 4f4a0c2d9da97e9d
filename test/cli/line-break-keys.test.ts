// The keys that end a line of a multi-line input, as readline's keypress events report them
// (the sequences below are fed through readline's own key parser).
import { emitKeypressEvents } from "node:readline";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { lineBreakKeys, type KeypressKey, type LineBreak } from "../../src/cli/line-break-keys.ts";

// What lineBreakKeys says for each key readline reads from `typed`.
function breaksIn(typed: string): (LineBreak | undefined)[] {
  const input = new PassThrough();
  emitKeypressEvents(input);
  const isLineBreak = lineBreakKeys();
  const found: (LineBreak | undefined)[] = [];
  input.on("keypress", (_text: string | undefined, key: KeypressKey) => found.push(isLineBreak(key)));
  input.write(typed);
  return found;
}

describe("lineBreakKeys", () => {
  it("tells Shift-, Ctrl- and Alt-Enter of the kitty protocol from Enter", () => {
    expect(breaksIn("a\x1b[13;2u")).toStrictEqual([undefined, { erase: 0 }]);
    expect(breaksIn("\x1b[13;5u\x1b[13;3u")).toStrictEqual([{ erase: 0 }, { erase: 0 }]);
    expect(breaksIn("\x1b[13;1u\r")).toStrictEqual([undefined, undefined]);
  });

  it("takes xterm's modifyOtherKeys Enter back out of the text readline inserted for it", () => {
    // Readline reads ESC [ 27;2; as a key, then 1, 3 and ~ as text.
    expect(breaksIn("x\x1b[27;2;13~y")).toStrictEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      { erase: 3 },
      undefined,
    ]);
    // Another modified key in that form is not a line break, and what follows it is typed text.
    expect(breaksIn("\x1b[27;5;9~13~")).toStrictEqual(Array.from({ length: 6 }, () => undefined));
  });

  it("takes Alt/Option-Enter (ESC CR, ESC LF) as a line break, Enter and Ctrl-J not", () => {
    expect(breaksIn("\x1b\r\x1b\n")).toStrictEqual([{ erase: 0 }, { erase: 0 }]);
    expect(breaksIn("\r\n")).toStrictEqual([undefined, undefined]);
  });
});
