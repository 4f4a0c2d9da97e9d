import { readFileSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openInBrowser } from "../../src/cli/open-browser.ts";

describe("openInBrowser (the view command on a desktop)", () => {
  const url = 'http://127.0.0.1:4321/?token=s3cr3t&x="<y>"';

  it("never puts the URL, with its token, on a command line: the browser gets an owner-only file that redirects to it", () => {
    const launched: { command: string; args: string[] }[] = [];
    const remove = openInBrowser(
      url,
      { DISPLAY: ":0" },
      "linux",
      (command, args) => void launched.push({ command, args }),
    );
    expect(launched).toHaveLength(1);
    expect(launched[0]!.command).toBe("xdg-open");
    expect(JSON.stringify(launched)).not.toContain("s3cr3t");
    const file = launched[0]!.args.at(-1)!;
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const html = readFileSync(file, "utf8");
    expect(html).toContain('content="0;url=http://127.0.0.1:4321/?token=s3cr3t&amp;x=&quot;&lt;y&gt;&quot;"');
    remove!();
    expect(() => statSync(file)).toThrow();
  });

  it("opens nothing on a Linux machine without a desktop", () => {
    const launched: unknown[] = [];
    expect(openInBrowser(url, {}, "linux", () => void launched.push(1))).toBeUndefined();
    expect(launched).toStrictEqual([]);
  });

  it("uses the platform's opener on macOS and Windows", () => {
    const commands: string[] = [];
    for (const platform of ["darwin", "win32"] as const)
      openInBrowser(url, {}, platform, (command) => void commands.push(command))?.();
    expect(commands).toStrictEqual(["open", "cmd"]);
  });
});

describe("openInBrowser with $BROWSER", () => {
  const url = "http://127.0.0.1:4321/?state=s3cr3t";

  it("runs $BROWSER's first command without a shell, with the page last or in place of %s, desktop or not", () => {
    const launched: { command: string; args: string[] }[] = [];
    const launch = (command: string, args: string[]): void => void launched.push({ command, args });
    openInBrowser(url, { BROWSER: "w3m -v:firefox" }, "linux", launch)?.();
    openInBrowser(url, { BROWSER: "my-browser --page %s --new-tab" }, "darwin", launch)?.();
    expect(launched.map(({ command }) => command)).toStrictEqual(["w3m", "my-browser"]);
    expect(launched[0]!.args.slice(0, -1)).toStrictEqual(["-v"]);
    expect(launched[0]!.args.at(-1)).toMatch(/open\.html$/);
    expect(launched[1]!.args[0]).toBe("--page");
    expect(launched[1]!.args[1]).toMatch(/open\.html$/);
    expect(launched[1]!.args[2]).toBe("--new-tab");
    expect(JSON.stringify(launched)).not.toContain("s3cr3t");
  });
});
