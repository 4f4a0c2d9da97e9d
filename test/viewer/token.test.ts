import { writeFileSync } from "node:fs";
import { request, type IncomingMessage } from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isAgentError } from "simple-agent-loop";
import { serveViewer, type Viewer } from "simple-agent-loop/viewer";
import { address, messageLine, openEventStream, tempDir } from "./helpers.ts";

const secret = "PRIVATE-PROMPT-CONTENT";

async function withViewer(test: (viewer: Viewer) => Promise<void>, token?: string): Promise<void> {
  const directory = tempDir();
  writeFileSync(join(directory, "a.jsonl"), messageLine({ role: "user", content: secret }));
  const viewer = await serveViewer(directory, { pollInterval: 50, ...(token === undefined ? {} : { token }) });
  try {
    await test(viewer);
  } finally {
    await viewer.close();
  }
}

const routes = [
  "",
  "?file=a.jsonl",
  "assets/app.js",
  "assets/style.css",
  "api/target",
  "api/sessions",
  "api/entries?file=a.jsonl",
  "api/events?file=a.jsonl",
  "nothing-here",
];

/** Every route, with `suffix` after its query (e.g. a token parameter) and `headers`: their statuses. A refusal must not hold the session. */
async function statuses(
  viewer: Viewer,
  suffix: (path: string) => string,
  headers: Record<string, string> = {},
): Promise<Record<string, number>> {
  const origin = new URL(viewer.url).origin;
  const result: Record<string, number> = {};
  for (const route of routes) {
    const response = await fetch(`${origin}/${route}${suffix(route)}`, { headers, redirect: "manual" });
    if (route.startsWith("api/events") && response.status === 200) await response.body?.cancel();
    else if (response.status === 403) expect(await response.text()).not.toContain(secret);
    else await response.text();
    result[route] = response.status;
  }
  return result;
}

/** A browser's top-level navigation to `path` (fetch does not let a script say so: `sec-fetch-mode` is the browser's). */
function navigate(viewer: Viewer, path: string): Promise<IncomingMessage> {
  const { hostname, port } = new URL(viewer.url);
  return new Promise((resolve, reject) => {
    const outgoing = request({ hostname, port, path, headers: { "sec-fetch-mode": "navigate" } }, (response) => {
      response.resume();
      resolve(response);
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}

const allRefused = Object.fromEntries(routes.map((route) => [route, 403]));
const served = { ...Object.fromEntries(routes.map((route) => [route, 200])), "nothing-here": 404 };

describe("serveViewer: only requests with the viewer's token are answered", () => {
  it("prints a URL holding a fresh random token; without a token every route is refused (403)", async () => {
    let first = "";
    await withViewer(async (viewer) => {
      expect(viewer.url).toBe(`${new URL(viewer.url).origin}/?token=${viewer.token}`);
      expect(viewer.token).toMatch(/^[\w-]{43}$/);
      first = viewer.token;
      expect(await statuses(viewer, () => "")).toStrictEqual(allRefused);
      const refused = await fetch(`${new URL(viewer.url).origin}/api/sessions`);
      expect(await refused.json()).toStrictEqual({ error: expect.stringContaining("token") });
      const posted = await fetch(`${new URL(viewer.url).origin}/api/sessions`, { method: "POST" });
      expect(posted.status).toBe(403);
    });
    await withViewer(async (viewer) => expect(viewer.token).not.toBe(first));
  });

  it("refuses a wrong token, in the query or in the cookie: another length, a prefix, another viewer's", async () => {
    await withViewer(async (viewer) => {
      await withViewer(async (other) => {
        const cookieName = (of: Viewer): string => `simple-agent-loop-viewer-${new URL(of.url).port}`;
        for (const wrong of [
          "x",
          viewer.token.slice(0, -1),
          `${viewer.token}x`,
          other.token,
          viewer.token.toUpperCase() === viewer.token ? "A".repeat(43) : viewer.token.toUpperCase(),
        ]) {
          const param = (route: string): string =>
            `${route.includes("?") ? "&" : "?"}token=${encodeURIComponent(wrong)}`;
          expect(await statuses(viewer, param)).toStrictEqual(allRefused);
          expect(await statuses(viewer, () => "", { cookie: `${cookieName(viewer)}=${wrong}` })).toStrictEqual(
            allRefused,
          );
        }
        // A cookie holding the right token under another viewer's name does not count either.
        expect(await statuses(viewer, () => "", { cookie: `${cookieName(other)}=${viewer.token}` })).toStrictEqual(
          allRefused,
        );
      });
    });
  });

  it("serves every route to the token in the query, which sets an HttpOnly SameSite=Strict cookie that then suffices", async () => {
    await withViewer(async (viewer) => {
      const param = (route: string): string => `${route.includes("?") ? "&" : "?"}token=${viewer.token}`;
      expect(await statuses(viewer, param)).toStrictEqual(served);
      const page = await fetch(viewer.url);
      expect(page.status).toBe(200);
      const cookie = page.headers.get("set-cookie")!;
      const name = `simple-agent-loop-viewer-${new URL(viewer.url).port}`;
      expect(cookie.split("; ").sort()).toStrictEqual(
        ["HttpOnly", "Path=/", "SameSite=Strict", `${name}=${viewer.token}`].sort(),
      );
      expect(await statuses(viewer, () => "", { cookie: `other=1; ${name}=${viewer.token}` })).toStrictEqual(served);
      // The event stream, on the cookie alone.
      const origin = new URL(viewer.url).origin;
      const response = await fetch(`${origin}/api/events?file=a.jsonl`, {
        headers: { cookie: `${name}=${viewer.token}` },
      });
      expect(response.status).toBe(200);
      await response.body?.cancel();
      const stream = await openEventStream(address(viewer, "api/events?file=a.jsonl"));
      expect((await stream.next()).records).toHaveLength(1);
      stream.close();
    });
  });

  it("sends a browser that opens the tokenized address to the same address without the token, keeping its cookie", async () => {
    await withViewer(async (viewer) => {
      const opened = await navigate(viewer, `/?token=${viewer.token}`);
      expect([opened.statusCode, opened.headers.location]).toStrictEqual([303, "/"]);
      expect(opened.headers["set-cookie"]).toStrictEqual([expect.stringContaining(`=${viewer.token};`)]);
      const withFile = await navigate(viewer, `/?file=a.jsonl&token=${viewer.token}`);
      expect([withFile.statusCode, withFile.headers.location]).toStrictEqual([303, "/?file=a.jsonl"]);
      // A wrong token is not redirected: refused.
      expect((await navigate(viewer, "/?token=wrong-token-wrong-token")).statusCode).toBe(403);
    });
  });

  it("uses the token given, and refuses one that is short or not URL-safe", async () => {
    const token = "my-own-token_0123456789";
    await withViewer(async (viewer) => {
      expect(viewer.token).toBe(token);
      expect(viewer.url.endsWith(`/?token=${token}`)).toBe(true);
      expect((await fetch(address(viewer, "api/target"))).status).toBe(200);
    }, token);
    const path = join(tempDir(), "s.jsonl");
    writeFileSync(path, "");
    for (const bad of ["", "short", "has space in it 0123456789", "semi;colon;0123456789abc", "x".repeat(257)]) {
      const error: unknown = await serveViewer(path, { token: bad }).catch((caught: unknown) => caught);
      expect(isAgentError(error)).toBe(true);
      expect((error as Error).message).toContain("token must be 16 to 256 characters");
    }
  });
});
