// Images and PDFs through the CLI: `read` returns them as parts, `--attach` and `@path` add
// workspace files to the task; checked in the request bodies the fake OpenAI-compatible server got.
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mentions } from "../../src/cli/attachments.ts";
import { sniffMediaType } from "../../src/content-parts.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { cliEnvironment, runCli, tempDirectory } from "./helpers.ts";
import { text, toolsIn } from "./tool-calls.ts";

// A real 1×1 PNG.
const png = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const pdf = Buffer.from("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n");

let server: FakeOpenAI;
let workspace: ReturnType<typeof tempDirectory>;
let home: ReturnType<typeof tempDirectory>;
let outside: ReturnType<typeof tempDirectory>;
const file = (path: string): string => join(workspace.path, path);

beforeEach(async () => {
  server = await startFakeOpenAI();
  workspace = tempDirectory("attach-ws-");
  home = tempDirectory("attach-home-");
  outside = tempDirectory("attach-out-");
});

afterEach(async () => {
  await server.close();
  for (const directory of [workspace, home, outside]) directory.remove();
});

const run = (args: string[]) =>
  runCli(["--model", "test-model", "--json", ...args], {
    cwd: workspace.path,
    env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL }),
  });

type Part = {
  type: string;
  text?: string;
  image_url?: { url: string };
  file?: { file_data: string; filename?: string };
};

// Every content part of the requests' user messages, in order.
function userParts(request: number): Part[] {
  const body = server.bodies()[request]!;
  return body.messages
    .filter((message) => message.role === "user")
    .flatMap((message) => (Array.isArray(message.content) ? (message.content as Part[]) : []));
}

describe("read of images and PDFs", () => {
  it("sends an image the model reads with `read` as an image, told apart by its bytes, not its name", async () => {
    writeFileSync(file("screenshot"), png);
    server.enqueue({ toolCalls: [{ name: "read", arguments: { path: "screenshot" } }] }, { text: "A dot." });
    const { code, stdout } = await run(["what is in screenshot?"]);
    expect(code, stdout).toBe(0);
    expect(server.bodies()).toHaveLength(2);
    // OpenAI Chat tool messages take text only: the image follows in a user message naming the call.
    const parts = userParts(1);
    expect(parts.find((part) => part.type === "image_url")?.image_url?.url).toBe(
      `data:image/png;base64,${png.toString("base64")}`,
    );
    const tool = server.bodies()[1]!.messages.find((message) => message.role === "tool")!;
    expect(JSON.stringify(tool.content)).toContain("screenshot: image/png, 70 B");
  });

  it("returns image and PDF parts; refuses them over their limit with a note saying what to do", async () => {
    writeFileSync(file("report.pdf"), pdf);
    writeFileSync(file("big.png"), Buffer.concat([png, Buffer.alloc(6 * 1024 * 1024)]));
    writeFileSync(file("notes.png"), "not an image after all\n");
    const { call } = toolsIn(workspace.path);
    const report = await call("read", { path: "report.pdf" });
    expect(report.content).toStrictEqual([
      { type: "text", text: `report.pdf: application/pdf, ${pdf.length} B` },
      { type: "file", mediaType: "application/pdf", data: pdf.toString("base64"), filename: "report.pdf" },
    ]);
    expect(await call("read", { path: "big.png" })).toMatchObject({
      isError: true,
      output:
        "Error: big.png is an image (image/png) of 6.0 MB, over the 5.0 MB that can be shown; use bash to make a smaller copy and read that",
    });
    // A .png that holds text is read as text.
    const notes = await call("read", { path: "notes.png" });
    expect(notes.content).toBeUndefined();
    expect(text(notes)).toBe("     1\tnot an image after all");
  });

  it("knows png, jpeg, gif, webp and PDF by their first bytes", () => {
    const bytes = (text: string, ...prefix: number[]): Uint8Array => Uint8Array.from([...prefix, ...Buffer.from(text)]);
    expect(sniffMediaType(png)).toBe("image/png");
    expect(sniffMediaType(bytes("", 0xff, 0xd8, 0xff, 0xe0))).toBe("image/jpeg");
    expect(sniffMediaType(bytes("GIF89a…"))).toBe("image/gif");
    expect(sniffMediaType(bytes("RIFF\x10\x00\x00\x00WEBPVP8 "))).toBe("image/webp");
    expect(sniffMediaType(bytes("RIFF\x10\x00\x00\x00WAVEfmt "))).toBeUndefined();
    expect(sniffMediaType(pdf)).toBe("application/pdf");
    expect(sniffMediaType(bytes("<svg xmlns='http://www.w3.org/2000/svg'/>"))).toBeUndefined();
    expect(sniffMediaType(bytes("\x89PN"))).toBeUndefined();
  });
});

describe("--attach and @path", () => {
  it("attaches images and PDFs as parts and text files as text, to the task's user message", async () => {
    mkdirSync(file("docs"));
    writeFileSync(file("shot.png"), png);
    writeFileSync(file("docs/spec.pdf"), pdf);
    writeFileSync(file("notes.txt"), "remember the milk\n");
    server.enqueue({ text: "Seen." });
    const { code, stdout } = await run([
      "--attach",
      "shot.png",
      "--attach",
      "docs/spec.pdf",
      "compare with @notes.txt, and ask @someone about @types/node.",
    ]);
    expect(code, stdout).toBe(0);
    const parts = userParts(0);
    expect(parts[0]).toStrictEqual({
      type: "text",
      text: "compare with @notes.txt, and ask @someone about @types/node.",
    });
    expect(parts.filter((part) => part.type === "image_url").map((part) => part.image_url!.url)).toStrictEqual([
      `data:image/png;base64,${png.toString("base64")}`,
    ]);
    expect(parts.filter((part) => part.type === "file").map((part) => part.file)).toStrictEqual([
      { file_data: `data:application/pdf;base64,${pdf.toString("base64")}`, filename: "spec.pdf" },
    ]);
    const texts = parts.filter((part) => part.type === "text").map((part) => part.text);
    expect(texts).toContain("[file notes.txt]\nremember the milk\n\n[end of notes.txt]");
    // Only files that exist are attached: @someone and @types/node stay words of the task.
    expect(texts.join("\n")).not.toContain("[file types");
  });

  it("keeps a task without attachments a plain string", async () => {
    server.enqueue({ text: "Hi." });
    expect((await run(["mail me at a@b.c or @nobody"])).code).toBe(0);
    expect(server.bodies()[0]!.messages.find((message) => message.role === "user")!.content).toBe(
      "mail me at a@b.c or @nobody",
    );
  });

  it("never attaches from outside the workspace, through a link, or from the CLI's home; nothing is sent", async () => {
    writeFileSync(join(outside.path, "secret.png"), png);
    symlinkSync(join(outside.path, "secret.png"), file("link.png"));
    const cases: [string[], RegExp][] = [
      [["--attach", "../x.png", "look"], /--attach \.\.\/x\.png: .*outside the workspace.*nothing was attached/],
      [["--attach", join(outside.path, "secret.png"), "look"], /outside the workspace/],
      [["look at @link.png"], /@link\.png: link\.png leads to .* through a symbolic link, outside the workspace/],
      [["--attach", "missing.png", "look"], /--attach missing\.png: missing\.png does not exist/],
    ];
    for (const [args, message] of cases) {
      const { code, stdout, stderr } = await run(args);
      expect(code, stderr).toBe(1);
      expect(stdout).toMatch(message);
    }
    expect(server.requests).toHaveLength(0);
  });

  it("refuses a binary file that is neither an image nor a PDF, and a file in the CLI's home", async () => {
    writeFileSync(file("data.bin"), Buffer.from([1, 2, 0, 3]));
    const { code, stdout } = await run(["--attach", "data.bin", "look"]);
    expect(code).toBe(1);
    expect(stdout).toContain(
      "data.bin is a binary file; only text, images (png, jpeg, gif, webp) and PDFs can be attached",
    );
    const inHome = tempDirectory("attach-home-ws-");
    try {
      writeFileSync(join(inHome.path, "trusted.json"), "{}");
      const inside = await runCli(["--model", "test-model", "--json", "--attach", "trusted.json", "look"], {
        cwd: inHome.path,
        env: cliEnvironment(inHome.path, { OPENAI_BASE_URL: server.baseURL }),
      });
      expect(inside.code).toBe(1);
      expect(inside.stdout).toContain("trusted.json is in the CLI's home");
    } finally {
      inHome.remove();
    }
    expect(server.requests).toHaveLength(0);
  });

  it("finds mentions at the start, after spaces, quoted, never inside a word", () => {
    expect(mentions('@a.ts then @"my shot.png", x@y.z and\t@b/c.')).toStrictEqual(["a.ts", "my shot.png", "b/c."]);
  });
});
