// What a task attaches is shown to the user, one dim line per file (name, media type, size), when
// it is sent and again when the session is resumed and its last turns are shown; names from the
// workspace are escaped on the way (the terminal-text path). In a pseudo-terminal, against the
// fake OpenAI-compatible server.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { attachmentsOf } from "../../src/cli/attachment-lines.ts";
import { taskContent } from "../../src/cli/attachments.ts";
import { createWorkspace } from "../../src/cli/tools/index.ts";
import { terminalFixture } from "./terminal-fixture.ts";
import { tempDirectory } from "./helpers.ts";

// A real 1×1 PNG (70 bytes).
const png = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const pdf = Buffer.from("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n");

const fixture = terminalFixture("cli-attach-shown");

describe("attachments on the terminal", () => {
  it("reads each attachment back from the message taskContent makes", async () => {
    const root = tempDirectory("attach-lines-");
    try {
      writeFileSync(join(root.path, "shot.png"), png);
      writeFileSync(join(root.path, "doc.pdf"), pdf);
      writeFileSync(join(root.path, "notes.txt"), "two\nlines\n");
      const content = await taskContent(createWorkspace(root.path), "see @doc.pdf and @notes.txt", ["shot.png"]);
      expect(attachmentsOf(content)).toStrictEqual([
        { name: "shot.png", mediaType: "image/png", bytes: png.length },
        { name: "doc.pdf", mediaType: "application/pdf", bytes: pdf.length },
        { name: "notes.txt", mediaType: "text/plain", bytes: 10 },
      ]);
      expect(attachmentsOf("no attachments")).toStrictEqual([]);
    } finally {
      root.remove();
    }
  });

  it(
    "shows each attached file when the task is sent and when the session is resumed, names escaped",
    { timeout: 120_000 },
    async () => {
      const workspace = fixture.workspace();
      writeFileSync(join(workspace, "shot.png"), png);
      writeFileSync(join(workspace, "doc.pdf"), pdf);
      writeFileSync(join(workspace, "notes.txt"), "two\nlines\n");
      // A name that would recolour the terminal if it reached it as it is.
      writeFileSync(join(workspace, "evil\x1b[31m.png"), png);
      fixture.server().enqueue({ text: "I see a dot." });
      const first = fixture.start(["--attach", "shot.png", "--attach", "evil\x1b[31m.png"]);
      await first.waitFor(/\n> $/);
      first.type("what is in @doc.pdf and @notes.txt?\r");
      await first.waitFor(/I see a dot\.[^]*\n> $/);
      const sent = first.screen();
      expect(sent).toContain(
        [
          `  ⎘ shot.png · image/png · ${png.length} B`,
          `  ⎘ evil^[[31m.png · image/png · ${png.length} B`,
          `  ⎘ doc.pdf · application/pdf · ${pdf.length} B`,
          "  ⎘ notes.txt · text/plain · 10 B",
        ].join("\n"),
      );
      // Shown before the answer, and the model got them all.
      expect(sent.indexOf("⎘ shot.png")).toBeLessThan(sent.indexOf("I see a dot."));
      const parts = fixture.server().bodies()[0]!.messages.at(-1)!.content as { type: string }[];
      expect(parts.filter((part) => part.type !== "text")).toHaveLength(3);
      first.type("/exit\r");
      expect(await first.exited).toBe(0);

      const second = fixture.start(["--resume"]);
      await second.waitFor(/resumed here[^]*\n> $/);
      const replayed = second.screen();
      expect(replayed).toMatch(
        new RegExp(
          [
            "> what is in @doc\\.pdf and @notes\\.txt\\?",
            `  ⎘ shot\\.png · image/png · ${png.length} B`,
            `  ⎘ evil\\^\\[\\[31m\\.png · image/png · ${png.length} B`,
            `  ⎘ doc\\.pdf · application/pdf · ${pdf.length} B`,
            "  ⎘ notes\\.txt · text/plain · 10 B",
            "I see a dot\\.",
          ].join("\\n"),
        ),
      );
      second.type("/exit\r");
      expect(await second.exited).toBe(0);
    },
  );
});
