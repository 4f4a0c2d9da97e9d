// Untrusted text on the terminal: every character that could act on the screen is shown instead.
import { describe, expect, it } from "vitest";
import { visibleJson, visibleLine, visibleText } from "../../src/cli/visible-text.ts";

describe("visibleText", () => {
  it("keeps text, line feeds and tabs; shows every control character as a visible escape", () => {
    expect(visibleText("plain text\n\tindented · ünïcode ✓ 日本")).toBe("plain text\n\tindented · ünïcode ✓ 日本");
    expect(visibleText("a\x1b[2Jb\x07c\x00d\x7fe\x9bf\bg")).toBe("a^[[2Jb^Gc^@d^?e\\x9bf^Hg");
    expect(visibleText("line\r\nnext\rover")).toBe("line\nnext^Mover");
  });

  it("shows Unicode format characters: bidi overrides, isolates, marks, zero-width characters, separators", () => {
    expect(visibleText("abc\u202Edef\u2066x\u2069\u200Fy")).toBe("abc<U+202E>def<U+2066>x<U+2069><U+200F>y");
    expect(visibleText("a\u200Bb\u200Cc\u200Dd\u2060e\uFEFFf\u00ADg")).toBe(
      "a<U+200B>b<U+200C>c<U+200D>d<U+2060>e<U+FEFF>f<U+00AD>g",
    );
    expect(visibleText("one\u2028two\u2029three\u3164")).toBe("one<U+2028>two<U+2029>three<U+3164>");
    expect(visibleText("tag\u{E0041}")).toBe("tag<U+E0041>");
  });

  it("keeps the joiner inside an emoji sequence", () => {
    expect(visibleText("family 👨\u200D👩\u200D👧 ok")).toBe("family 👨\u200D👩\u200D👧 ok");
    expect(visibleText("👨\u200Drm")).toBe("👨<U+200D>rm");
  });

  it("is idempotent: escaped text has nothing left to escape", () => {
    const nasty = "x\x1b]0;title\x07\u202E\r\n\b\x9b";
    expect(visibleText(visibleText(nasty))).toBe(visibleText(nasty));
    expect(visibleLine(visibleLine(nasty))).toBe(visibleLine(nasty));
  });
});

describe("visibleLine", () => {
  it("escapes line feeds and tabs too, so one line stays one line", () => {
    expect(visibleLine("echo hi\nrm -rf ~\tx\r\n")).toBe("echo hi^Jrm -rf ~^Ix^M^J");
  });

  it("shows the backspaces that would hide a command behind another", () => {
    const command = `touch PWNED #${"\b".repeat(13)}ls -la`;
    expect(visibleLine(command)).toBe(`touch PWNED #${"^H".repeat(13)}ls -la`);
  });
});

describe("visibleJson", () => {
  it("writes the same JSON with every character that could act on a terminal as a \\u escape", () => {
    const value = { text: "a\x1b[2J\x9b\u202Eb\u2028\u{E0041}\x7f", plain: "ünïcode ✓", list: [1, "\n"] };
    const line = visibleJson(value);
    expect(line).toBe(
      '{"text":"a\\u001b[2J\\u009b\\u202eb\\u2028\\udb40\\udc41\\u007f","plain":"ünïcode ✓","list":[1,"\\n"]}',
    );
    expect(JSON.parse(line)).toStrictEqual(value);
  });
});
