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

const apiRoutes = routes.filter((route) => route.startsWith("api/"));
const publicRoutes = { "": 200, "?file=a.jsonl": 200, "assets/app.js": 200, "assets/style.css": 200 };
// Without the token: the page and its assets (which hold nothing of a session) are served, every route that reads a log refused.
const apiRefused = {
  ...publicRoutes,
  ...Object.fromEntries(apiRoutes.map((route) => [route, 403])),
  "nothing-here": 403,
};
const allRefused = Object.fromEntries(routes.map((route) => [route, 403]));
const served = { ...Object.fromEntries(routes.map((route) => [route, 200])), "nothing-here": 404 };
const tokenFragment = (viewer: Viewer): string => `${new URL(viewer.url).origin}/#token=${viewer.token}`;

describe("serveViewer: only requests with the viewer's token read a session", () => {
  it("prints a URL holding a fresh random token in its fragment; without a token every API route is refused (403)", async () => {
    let first = "";
    await withViewer(async (viewer) => {
      expect(viewer.url).toBe(tokenFragment(viewer));
      expect(viewer.token).toMatch(/^[\w-]{43}$/);
      first = viewer.token;
      expect(await statuses(viewer, () => "")).toStrictEqual(apiRefused);
      const refused = await fetch(`${new URL(viewer.url).origin}/api/sessions`);
      expect(await refused.json()).toStrictEqual({ error: expect.stringContaining("token") });
      const posted = await fetch(`${new URL(viewer.url).origin}/api/sessions`, { method: "POST" });
      expect(posted.status).toBe(405);
    });
    await withViewer(async (viewer) => expect(viewer.token).not.toBe(first));
  });

  it("refuses a wrong token, in the query or in the header: another length, a prefix, another viewer's", async () => {
    await withViewer(async (viewer) => {
      await withViewer(async (other) => {
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
          expect(await statuses(viewer, () => "", { "x-viewer-token": wrong })).toStrictEqual(apiRefused);
        }
      });
    });
  });

  it("takes no cookie, and sets none: a browser sends a host's cookies to every port of it", async () => {
    await withViewer(async (viewer) => {
      const param = (route: string): string => `${route.includes("?") ? "&" : "?"}token=${viewer.token}`;
      const origin = new URL(viewer.url).origin;
      for (const route of routes) {
        const response = await fetch(`${origin}/${route}${param(route)}`, { redirect: "manual" });
        await response.body?.cancel();
        expect(response.headers.get("set-cookie"), route).toBeNull();
      }
      const port = new URL(viewer.url).port;
      for (const cookie of [
        `simple-agent-loop-viewer-${port}=${viewer.token}`,
        `token=${viewer.token}`,
        `x-viewer-token=${viewer.token}`,
      ])
        expect(await statuses(viewer, () => "", { cookie })).toStrictEqual(apiRefused);
    });
  });

  it("serves every route to the token in the X-Viewer-Token header (the page's way) or in the query (a script's)", async () => {
    await withViewer(async (viewer) => {
      const param = (route: string): string => `${route.includes("?") ? "&" : "?"}token=${viewer.token}`;
      expect(await statuses(viewer, param)).toStrictEqual(served);
      expect(await statuses(viewer, () => "", { "x-viewer-token": viewer.token })).toStrictEqual(served);
      const stream = await openEventStream(address(viewer, "api/events?file=a.jsonl"));
      expect((await stream.next()).records).toHaveLength(1);
      stream.close();
    });
  });

  it("answers no page of another origin: a preflight for the header gets no CORS grant", async () => {
    await withViewer(async (viewer) => {
      const response = await fetch(`${new URL(viewer.url).origin}/api/sessions`, {
        method: "OPTIONS",
        headers: {
          origin: `http://127.0.0.1:${Number(new URL(viewer.url).port) === 1 ? 2 : 1}`,
          "access-control-request-method": "GET",
          "access-control-request-headers": "x-viewer-token",
        },
      });
      await response.body?.cancel();
      expect(response.ok).toBe(false);
      expect([...response.headers.keys()].filter((name) => name.startsWith("access-control-"))).toStrictEqual([]);
    });
  });

  it("sends a browser that opens an address with the token in its query to the same address with the token in the fragment", async () => {
    await withViewer(async (viewer) => {
      const opened = await navigate(viewer, `/?token=${viewer.token}`);
      expect([opened.statusCode, opened.headers.location]).toStrictEqual([303, `/#token=${viewer.token}`]);
      expect(opened.headers["set-cookie"]).toBeUndefined();
      const withFile = await navigate(viewer, `/?file=a.jsonl&token=${viewer.token}`);
      expect([withFile.statusCode, withFile.headers.location]).toStrictEqual([
        303,
        `/?file=a.jsonl#token=${viewer.token}`,
      ]);
      // A wrong token is not redirected: refused.
      expect((await navigate(viewer, "/?token=wrong-token-wrong-token")).statusCode).toBe(403);
    });
  });

  it("uses the token given, and refuses one that is short or not URL-safe", async () => {
    const token = "my-own-token_0123456789";
    await withViewer(async (viewer) => {
      expect(viewer.token).toBe(token);
      expect(viewer.url.endsWith(`/#token=${token}`)).toBe(true);
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
