// Untrusted text on the terminal: control characters become visible escapes.
import { describe, expect, it } from "vitest";
import { visibleText } from "../../src/cli/visible-text.ts";

describe("visibleText", () => {
  it("keeps text, line feeds and tabs; shows every other control character as a visible escape", () => {
    expect(visibleText("plain text\n\tindented · ünïcode ✓")).toBe("plain text\n\tindented · ünïcode ✓");
    expect(visibleText("a\x1b[2Jb\x07c\x00d\x7fe\x9bf")).toBe("a^[[2Jb^Gc^@d^?e\\x9bf");
    expect(visibleText("line\r\nnext\rover")).toBe("line\nnext^Mover");
    expect(visibleText("abc\u202Edef\u2066")).toBe("abc<U+202E>def<U+2066>");
  });
});
