import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { isAgentError } from "simple-agent-loop";
import { closeSession, loadEntries, loadSession } from "simple-agent-loop/store";
import { serveViewer, type Viewer } from "simple-agent-loop/viewer";
import { address, withViewer, line, messageLine, openEventStream, tempDir } from "./helpers.ts";
import { recordSession } from "./record-session.ts";

async function getJson(url: string): Promise<{ status: number; type: string | null; body: unknown }> {
  const response = await fetch(url);
  return { status: response.status, type: response.headers.get("content-type"), body: await response.json() };
}

/** A raw request with the viewer's token: the path and Host header exactly as given (fetch would normalize both). */
function rawGet(viewer: Viewer, path: string, host?: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(viewer.url);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { hostname, port, path: `${path}?token=${viewer.token}`, headers: host === undefined ? {} : { host } },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (body += chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    outgoing.on("error", reject);
    outgoing.end();
  });
}

describe("serveViewer: the JSON endpoints", () => {
  it("serves one log: its summary, and its entries numbered by line, exactly as the store reads them", async () => {
    const { path, session } = await recordSession(tempDir());
    await closeSession(session);
    const entries = await loadEntries(path);
    const last = entries.at(-1) as { ts?: string; message?: { ts?: string } };
    // The token counts of every model call appended, those compaction removed later too.
    type Entry = { type: string; message?: { usage?: { inputTokens: number; outputTokens: number } } };
    const lines = readFileSync(path, "utf8")
      .trim()
      .split("\n")
      .map((text) => JSON.parse(text) as Entry);
    const usages = lines.flatMap((entry) =>
      entry.type === "message" && entry.message?.usage !== undefined ? [entry.message.usage] : [],
    );
    const userTexts = lines.flatMap((entry) => {
      const { role, content } = (entry.message ?? {}) as { role?: string; content?: unknown };
      return entry.type === "message" && role === "user" && typeof content === "string" ? [content] : [];
    });
    await withViewer(path, async (viewer) => {
      expect(viewer.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]{43}$/);
      expect((await getJson(address(viewer, `api/target`))).body).toStrictEqual({
        mode: "file",
        name: "release-agent.jsonl",
      });
      expect(await getJson(address(viewer, `api/sessions`))).toStrictEqual({
        status: 200,
        type: "application/json; charset=utf-8",
        body: {
          mode: "file",
          name: "release-agent.jsonl",
          sessions: [
            {
              file: "release-agent.jsonl",
              size: statSync(path).size,
              messages: (await loadSession(path)).messages.length,
              lastActivity: last.ts ?? last.message?.ts,
              title: "Why is CI failing on main?",
              latestTask: userTexts.at(-1)!.slice(0, 120),
              tasks: userTexts.length,
              workspace: null,
              // The recorded run ends waiting for a deploy's approval.
              outcome: "paused",
              tokens: {
                input: usages.reduce((sum, usage) => sum + usage.inputTokens, 0),
                output: usages.reduce((sum, usage) => sum + usage.outputTokens, 0),
              },
              problems: 0,
            },
          ],
        },
      });
      const expected = {
        reset: true,
        records: entries.map((entry, index) => ({ line: index + 1, entry })),
        problems: [],
      };
      expect((await getJson(address(viewer, `api/entries`))).body).toStrictEqual(expected);
      expect((await getJson(address(viewer, `api/entries?file=release-agent.jsonl`))).body).toStrictEqual(expected);
      expect((await getJson(address(viewer, `api/entries?file=other.jsonl`))).status).toBe(404);
    });
  });

  it("lists the logs of a directory, newest activity first, with message counts; other files are not sessions", async () => {
    const directory = tempDir();
    writeFileSync(
      join(directory, "older.jsonl"),
      messageLine({ role: "system", content: "s" }, "2025-01-01T00:00:00.000Z") +
        messageLine({ role: "user", content: "the first question" }, "2025-01-01T00:00:01.000Z") +
        messageLine({ role: "assistant", content: "an answer" }, "2025-01-01T00:00:05.000Z"),
    );
    writeFileSync(
      join(directory, "newer.jsonl"),
      messageLine({ role: "user", content: `a long question ${"x".repeat(200)}` }, "2025-02-01T00:00:00.000Z") +
        messageLine({ role: "assistant", content: "a" }, "2025-02-01T00:00:01.000Z") +
        messageLine({ role: "assistant", content: "b" }, "2025-02-01T00:00:02.000Z") +
        line({
          type: "splice",
          index: 1,
          reason: "compaction",
          ts: "2025-02-01T00:00:03.000Z",
          removed: [
            { role: "assistant", content: "a" },
            { role: "assistant", content: "b" },
          ],
          inserted: [{ role: "user", content: "summary" }],
        }),
    );
    writeFileSync(
      join(directory, "broken.jsonl"),
      `{not json\n${messageLine({ role: "user", content: "still read" }, "2024-06-01T00:00:00.000Z")}`,
    );
    writeFileSync(join(directory, "notes.txt"), "not a session");
    writeFileSync(join(directory, ".hidden.jsonl"), messageLine({ role: "user", content: "hidden" }));
    mkdirSync(join(directory, "nested"));
    writeFileSync(join(directory, "nested", "inner.jsonl"), messageLine({ role: "user", content: "nested" }));
    const size = (name: string): number => statSync(join(directory, name)).size;
    // Hand-written logs: no workspace, no token counts; each ends with an answer without a stop
    // reason, which is done by the one rule the stores' list() uses too (restingOutcome).
    const answered = { workspace: null, outcome: "done", tokens: { input: 0, output: 0 } };
    const unfinished = { ...answered, outcome: "unfinished" };
    await withViewer(directory, async (viewer) => {
      expect((await getJson(address(viewer, `api/target`))).body).toStrictEqual({
        mode: "directory",
        name: basename(directory),
      });
      expect((await getJson(address(viewer, `api/sessions`))).body).toStrictEqual({
        mode: "directory",
        name: directory.split("/").at(-1),
        sessions: [
          {
            file: "newer.jsonl",
            size: size("newer.jsonl"),
            messages: 2,
            lastActivity: "2025-02-01T00:00:03.000Z",
            title: `a long question ${"x".repeat(104)}`,
            latestTask: `a long question ${"x".repeat(104)}`,
            tasks: 1,
            ...answered,
            problems: 0,
          },
          {
            file: "older.jsonl",
            size: size("older.jsonl"),
            messages: 3,
            lastActivity: "2025-01-01T00:00:05.000Z",
            title: "the first question",
            latestTask: "the first question",
            tasks: 1,
            ...answered,
            problems: 0,
          },
          {
            file: "broken.jsonl",
            size: size("broken.jsonl"),
            messages: 1,
            lastActivity: "2024-06-01T00:00:00.000Z",
            title: "still read",
            latestTask: "still read",
            tasks: 1,
            ...unfinished,
            problems: 1,
          },
        ],
      });
      const older = await getJson(address(viewer, `api/entries?file=older.jsonl`));
      expect(older.body).toMatchObject({ reset: true, problems: [], records: [{ line: 1 }, { line: 2 }, { line: 3 }] });
      // Which session to show must be said in a directory.
      expect((await getJson(address(viewer, `api/entries`))).status).toBe(400);
    });
  });

  it("reports each malformed line by its number and returns every other entry; a torn last line is left for later", async () => {
    const path = join(tempDir(), "damaged.jsonl");
    const system = { type: "message", message: { role: "system", content: "s" } };
    const user = { type: "message", message: { role: "user", content: "u" } };
    const assistant = { type: "message", message: { role: "assistant", content: "a" } };
    writeFileSync(
      path,
      [
        JSON.stringify(system),
        "{not json",
        JSON.stringify(user),
        "[1, 2]",
        '{"no":"type"}',
        "",
        JSON.stringify(assistant),
        '{"type":"message","mess',
      ].join("\n"),
    );
    await withViewer(path, async (viewer) => {
      expect((await getJson(address(viewer, `api/entries`))).body).toStrictEqual({
        reset: true,
        records: [
          { line: 1, entry: system },
          { line: 3, entry: user },
          { line: 7, entry: assistant },
        ],
        problems: [
          { line: 2, message: expect.stringMatching(/^not valid JSON \(.+\): \{not json$/) },
          { line: 4, message: 'not a log entry (a JSON object with a string "type"): [1, 2]' },
          { line: 5, message: 'not a log entry (a JSON object with a string "type"): {"no":"type"}' },
        ],
        partial: { line: 8, bytes: Buffer.byteLength('{"type":"message","mess') },
      });
    });
  });
});

describe("serveViewer: what it says of a bad line is short", () => {
  it("quotes at most 80 characters of a line, whatever its size, and never half a character", async () => {
    const path = join(tempDir(), "bad.jsonl");
    const huge = "z".repeat(1_000_000);
    writeFileSync(
      path,
      [
        `{not json ${huge}`,
        `[${JSON.stringify(huge)}]`,
        `${"😀".repeat(100)}`,
        JSON.stringify({ type: "custom" }),
      ].join("\n") + `  trailing text ${huge}\n`,
    );
    await withViewer(path, async (viewer) => {
      const response = await fetch(address(viewer, "api/entries"));
      const text = await response.text();
      expect(text.length).toBeLessThan(2000);
      const body = JSON.parse(text) as { problems: { line: number; message: string }[] };
      expect(body.problems.map((problem) => problem.line)).toStrictEqual([1, 2, 3, 4]);
      for (const problem of body.problems) expect(problem.message.length).toBeLessThan(300);
      expect(body.problems[2]!.message).toMatch(/^not valid JSON \(.+\): (😀){40}…$/u);
      // No half character (a lone surrogate) anywhere.
      for (const problem of body.problems)
        expect(problem.message).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    });
  });
});

describe("serveViewer: /api/entries of a log with very many bad lines", () => {
  it("lists the first 1000 problems and counts the rest, and still returns every entry", async () => {
    const path = join(tempDir(), "noisy.jsonl");
    const good = (index: number) => messageLine({ role: "user", content: `good ${index}` });
    writeFileSync(path, Array.from({ length: 1500 }, (_, index) => `{bad ${index}\n${good(index)}`).join(""));
    await withViewer(path, async (viewer) => {
      const body = (await (await fetch(address(viewer, "api/entries"))).json()) as {
        records: { line: number }[];
        problems: { line?: number; message: string }[];
      };
      expect(body.records.map((record) => record.line)).toStrictEqual(
        Array.from({ length: 1500 }, (_, index) => 2 * index + 2),
      );
      expect(body.problems).toHaveLength(1001);
      expect(body.problems.slice(0, 1000).map((problem) => problem.line)).toStrictEqual(
        Array.from({ length: 1000 }, (_, index) => 2 * index + 1),
      );
      expect(body.problems[1000]).toStrictEqual({
        message: "500 more lines could not be read (only the first 1000 are listed)",
      });
    });
  });
});

describe("serveViewer: what it refuses", () => {
  it("serves only *.jsonl files directly in the directory: no path, hidden file or symlink leads out", async () => {
    const outside = tempDir();
    const secret = "SECRET-CONTENT-OUTSIDE";
    writeFileSync(join(outside, "secret.jsonl"), messageLine({ role: "user", content: secret }));
    const directory = join(outside, "served");
    mkdirSync(directory);
    writeFileSync(join(directory, "ok.jsonl"), messageLine({ role: "user", content: "fine" }));
    writeFileSync(join(directory, ".hidden.jsonl"), messageLine({ role: "user", content: secret }));
    writeFileSync(join(directory, "notes.txt"), secret);
    mkdirSync(join(directory, "nested"));
    writeFileSync(join(directory, "nested", "inner.jsonl"), messageLine({ role: "user", content: secret }));
    symlinkSync(join(outside, "secret.jsonl"), join(directory, "link.jsonl"));
    await withViewer(directory, async (viewer) => {
      const refused: [string, number][] = [
        ["../secret.jsonl", 400],
        ["..%2Fsecret.jsonl", 400],
        ["%2E%2E%2Fsecret.jsonl", 400],
        ["..%5Csecret.jsonl", 400],
        [encodeURIComponent(join(outside, "secret.jsonl")), 400],
        [".hidden.jsonl", 400],
        ["notes.txt", 400],
        ["nested%2Finner.jsonl", 400],
        ["secret.jsonl%00.jsonl", 400],
        ["link.jsonl", 404],
        ["missing.jsonl", 404],
      ];
      for (const endpoint of ["api/entries", "api/events"]) {
        for (const [file, status] of refused) {
          const response = await fetch(address(viewer, `${endpoint}?file=${file}`));
          const body = await response.text();
          expect({ file, endpoint, status: response.status, type: response.headers.get("content-type") }).toStrictEqual(
            { file, endpoint, status, type: "application/json; charset=utf-8" },
          );
          expect(body).not.toContain(secret);
          expect(JSON.parse(body)).toStrictEqual({ error: expect.any(String) });
        }
      }
      for (const path of [
        "/assets/../../secret.jsonl",
        "/../secret.jsonl",
        "/api/../../served/../secret.jsonl",
        "/secret.jsonl",
        "/ok.jsonl",
      ]) {
        const response = await rawGet(viewer, path);
        expect({ path, status: response.status }).toStrictEqual({ path, status: 404 });
        expect(response.body).not.toContain(secret);
      }
      const listing = await fetch(address(viewer, `api/sessions`));
      const listed = await listing.text();
      expect(listed).not.toContain(secret);
      expect(
        (JSON.parse(listed) as { sessions: { file: string }[] }).sessions.map((session) => session.file),
      ).toStrictEqual(["ok.jsonl"]);
      expect((await getJson(address(viewer, `api/entries?file=ok.jsonl`))).status).toBe(200);
    });
  });

  it("answers only requests addressed to a loopback host, and only GET and HEAD", async () => {
    const path = join(tempDir(), "s.jsonl");
    writeFileSync(path, messageLine({ role: "user", content: "u" }));
    await withViewer(path, async (viewer) => {
      const port = new URL(viewer.url).port;
      expect((await rawGet(viewer, "/api/sessions", `evil.example:${port}`)).status).toBe(403);
      expect((await rawGet(viewer, "/", `127.0.0.1.evil.example:${port}`)).status).toBe(403);
      expect((await rawGet(viewer, "/api/sessions", `localhost:${port}`)).status).toBe(200);
      const posted = await fetch(address(viewer, `api/sessions`), { method: "POST", body: "{}" });
      expect([posted.status, posted.headers.get("allow")]).toStrictEqual([405, "GET, HEAD"]);
      const head = await fetch(address(viewer, `api/sessions`), { method: "HEAD" });
      expect([head.status, head.headers.get("content-type")]).toStrictEqual([200, "application/json; charset=utf-8"]);
    });
  });

  it("refuses a host that is not loopback, a bad port and a missing path, with clear errors", async () => {
    const path = join(tempDir(), "s.jsonl");
    writeFileSync(path, "");
    for (const host of ["0.0.0.0", "::", "192.168.1.10", "example.com"]) {
      const error: unknown = await serveViewer(path, { host }).catch((caught: unknown) => caught);
      expect(isAgentError(error)).toBe(true);
      expect((error as Error).message).toContain(`host ${JSON.stringify(host)} is not a loopback address`);
    }
    await expect(serveViewer(path, { port: 70_000 })).rejects.toThrow("port must be an integer from 0 to 65535");
    await expect(serveViewer(join(tempDir(), "nothing-here.jsonl"))).rejects.toThrow("no session log or directory at");
    await withViewer(path, async (viewer) => {
      // The port option is honoured: a second viewer on the same port cannot listen.
      await expect(serveViewer(path, { port: Number(new URL(viewer.url).port) })).rejects.toThrow(/EADDRINUSE/);
    });
    const localhost = await serveViewer(path, { host: "localhost" });
    expect(localhost.url).toMatch(/^http:\/\/localhost:\d+\/#token=/);
    await localhost.close();
  });
});

describe("serveViewer: the page and its assets", () => {
  it("serves the page with a strict content security policy, and its scripts and style with their types", async () => {
    const path = join(tempDir(), "s.jsonl");
    writeFileSync(path, messageLine({ role: "user", content: "u" }));
    await withViewer(path, async (viewer) => {
      const page = await fetch(viewer.url);
      const html = await page.text();
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(page.headers.get("content-security-policy")).toContain(
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'",
      );
      expect(page.headers.get("x-content-type-options")).toBe("nosniff");
      const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1]!);
      expect(assets.sort()).toStrictEqual(["/assets/app.js", "/assets/style.css"]);
      const app = await fetch(address(viewer, "assets/app.js"));
      expect(app.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      // Every module the page imports is served as JavaScript.
      for (const match of (await app.text()).matchAll(/from "\.\/([a-z-]+\.js)"/g)) {
        const module = await fetch(address(viewer, `assets/${match[1]}`));
        expect([match[1], module.status, module.headers.get("content-type")]).toStrictEqual([
          match[1],
          200,
          "text/javascript; charset=utf-8",
        ]);
      }
      expect((await fetch(address(viewer, "assets/style.css"))).headers.get("content-type")).toBe(
        "text/css; charset=utf-8",
      );
      const missing = await fetch(address(viewer, "assets/nothing.js"));
      expect([missing.status, missing.headers.get("content-type")]).toStrictEqual([
        404,
        "application/json; charset=utf-8",
      ]);
    });
  });

  it("the event stream is text/event-stream; close() ends open streams and resolves", async () => {
    const path = join(tempDir(), "s.jsonl");
    writeFileSync(path, messageLine({ role: "user", content: "u" }));
    const viewer = await serveViewer(path);
    const stream = await openEventStream(address(viewer, `api/events`));
    expect(stream.contentType).toBe("text/event-stream; charset=utf-8");
    expect((await stream.next()).records).toHaveLength(1);
    await viewer.close();
    await expect(stream.next()).rejects.toThrow();
    expect(readFileSync(path, "utf8")).toBe(messageLine({ role: "user", content: "u" }));
  });
});
