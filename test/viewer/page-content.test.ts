// Images and files of a session in the page, in a real browser: thumbnails read from the log's
// blobs (a click shows the full size), files as name, type and size, hostile parts never drawn.
import { join } from "node:path";
import { expect, it } from "vitest";
import { agentLoop, filePart, imagePart, send, tool, toolContent } from "simple-agent-loop";
import { closeSession, openSession } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { describeInBrowser, viewerPages } from "./browser.ts";
import { tempDir } from "./helpers.ts";

const timeout = 60_000;

// A real 1×1 PNG, and a 2×1 one.
const png = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const wide = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAYAAAD0In+KAAAAEUlEQVR42mP8z8Dwn4GBgQEAE/4B/2i/j9AAAAAASUVORK5CYII=",
  "base64",
);
const svg = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" onload="window.pwned=1"><script>window.pwned=2</script></svg>',
);
const pdf = Buffer.from("%PDF-1.4\n%%EOF\n");

async function sessionWithMedia(): Promise<string> {
  const path = join(tempDir(), "media.jsonl");
  const session = await openSession(path);
  send(session, [{ type: "text", text: "what is on the screen?" }, imagePart(png, "image/png")]);
  const screenshot = tool({
    name: "screenshot",
    description: "Screenshots the page.",
    inputSchema: { type: "object" },
    handler: () =>
      toolContent([
        { type: "text", text: "screenshot of /" },
        imagePart(wide, "image/png"),
        filePart(pdf, "application/pdf", "report.pdf"),
        imagePart(svg, "image/svg+xml"),
        { type: "image", url: "https://example.com/remote.png" },
      ]),
  });
  await agentLoop(
    scriptedModel([
      [{ type: "tool_call", id: "shot", name: "screenshot", input: {} }],
      { role: "assistant", content: "A dot." },
    ]),
    [screenshot],
    session,
  );
  await closeSession(session);
  return path;
}

describeInBrowser("content parts in the viewer page", () => {
  const { open } = viewerPages();

  it(
    "shows images as thumbnails loaded from the blobs, full size on a click, and files as name, type and size",
    async () => {
      const page = await open(await sessionWithMedia());
      const thumbs = page.locator("figure.thumb");
      expect(await thumbs.count()).toBe(2);
      // Each image loaded and decoded (through /api/blob with the token in a header).
      await page.waitForFunction(
        `[...document.querySelectorAll("figure.thumb img")].every((image) => image.complete && image.naturalWidth > 0)`,
        undefined,
        { timeout },
      );
      const sizes = await page.evaluate(
        `[...document.querySelectorAll("figure.thumb img")].map((image) => [image.naturalWidth, image.naturalHeight, image.src.startsWith("blob:")])`,
      );
      expect(sizes).toStrictEqual([
        [1, 1, true],
        [2, 1, true],
      ]);
      expect(await page.locator(".msg.user .text").first().textContent()).toBe("what is on the screen?");
      await page.locator(".msg.user figure.thumb figcaption", { hasText: `image/png · ${png.length} B` }).waitFor();

      const resultThumb = page.locator('.tool[data-call="shot"] figure.thumb');
      expect(await resultThumb.getAttribute("class")).toBe("thumb");
      await resultThumb.locator("img").click();
      expect(await resultThumb.getAttribute("class")).toBe("thumb full");
      await resultThumb.locator("img").click();
      expect(await resultThumb.getAttribute("class")).toBe("thumb");

      // The PDF, the SVG and the URL image: a line each, never drawn.
      const files = page.locator('.tool[data-call="shot"] .part-file');
      expect(await files.count()).toBe(3);
      const report = files.nth(0);
      expect(await report.locator(".part-name").textContent()).toBe("report.pdf");
      expect(await report.locator(".part-type").textContent()).toBe("application/pdf");
      await report.locator(".part-size", { hasText: `${pdf.length} B` }).waitFor({ timeout });
      expect(await report.locator("a.part-download").count()).toBe(1);
      expect(await files.nth(1).locator(".part-type").textContent()).toBe("image/svg+xml");
      expect(await files.nth(2).locator(".part-url").textContent()).toBe("https://example.com/remote.png");
      expect(await page.locator('.tool[data-call="shot"] .parts .text').first().textContent()).toBe("screenshot of /");
      expect(await page.evaluate("window.pwned")).toBeUndefined();

      // A download is the browser's, with the part's name.
      const [download] = await Promise.all([page.waitForEvent("download"), report.locator("a.part-download").click()]);
      expect(download.suggestedFilename()).toBe("report.pdf");
    },
    timeout * 2,
  );
});
