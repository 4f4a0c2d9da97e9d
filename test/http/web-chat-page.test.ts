// The web chat example in a real browser against a scripted model whose turns the test paces:
// text arrives in pieces, the approval goes through the page's button, a reload mid-run resumes
// without losing or repeating anything, and a failure shows as an error on the page.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { stripTypeScriptTypes } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { InvokeModel, ModelMessage, ModelStreamEvent } from "simple-agent-loop";
import { startWebChat, type WebChat } from "../../examples/web-chat/server.ts";
import { describeInBrowser, launchBrowser } from "../viewer/browser.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));

// What the page shows, waited for as long as a loaded machine needs (expect.poll's own default is 1 s).
const poll: typeof expect.poll = (check, options) => expect.poll(check, { timeout: 30_000, ...options });

/** A promise the test resolves when it wants the model to go on. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** A turn: text pieces (a gate between two pieces holds the stream there), then the turn's other messages. */
type PacedTurn = { pieces: (string | Promise<void>)[]; then?: ModelMessage[] } | { error: string };

function pacedModel(turns: PacedTurn[]): InvokeModel {
  let call = 0;
  return (_tools, _session, { signal }) => {
    const turn = turns[call++];
    return (async function* (): AsyncGenerator<ModelStreamEvent> {
      if (turn === undefined) throw new Error(`no turn scripted for call ${call}`);
      if ("error" in turn) throw new Error(turn.error);
      let text = "";
      for (const piece of turn.pieces) {
        if (typeof piece === "string") {
          text += piece;
          yield { type: "text-delta", delta: piece };
        } else {
          await Promise.race([piece, new Promise((_resolve, reject) => signal.addEventListener("abort", reject))]);
        }
      }
      yield { type: "message", message: { role: "assistant", content: text } };
      for (const message of turn.then ?? []) yield { type: "message", message };
      yield { type: "response-end", stopReason: (turn.then ?? []).length > 0 ? "tool_use" : "end_turn" };
    })();
  };
}

describeInBrowser("the web chat example in a browser", () => {
  let browser: Browser;
  const chats: WebChat[] = [];
  const directories: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    browser = await launchBrowser();
  }, 60_000);
  afterEach(() => expect(pageErrors.splice(0)).toStrictEqual([]));
  afterAll(async () => {
    await Promise.all(chats.map((chat) => chat.close()));
    await browser?.close();
    await Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true })));
  });

  async function openChat(invokeModel: InvokeModel, viewer = false, keepFinishedMs?: number): Promise<Page> {
    const directory = await mkdtemp(join(tmpdir(), "web-chat-"));
    directories.push(directory);
    const chat = await startWebChat({
      invokeModel,
      directory,
      viewer,
      ...(keepFinishedMs === undefined ? {} : { keepFinishedMs }),
    });
    chats.push(chat);
    const page = await browser.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(chat.url);
    return page;
  }

  async function run(page: Page, task: string): Promise<void> {
    await page.fill("#task", task);
    await page.click("#send");
  }

  const assistantTexts = (page: Page) => page.locator(".bubble.assistant").allTextContents();

  it("streams text in pieces, asks for approval with buttons, runs the call once approved, links the viewer", async () => {
    const held = gate();
    const page = await openChat(
      pacedModel([
        {
          pieces: ["Checking ", held.wait, "the notes."],
          then: [{ type: "tool_call", id: "w1", name: "write_note", input: { title: "Task", text: "milk" } }],
        },
        { pieces: ["Saved ", "it."] },
      ]),
      true,
    );
    await run(page, "remember milk");
    await poll(() => assistantTexts(page)).toStrictEqual(["Checking "]);
    held.open();
    await poll(() => assistantTexts(page)).toStrictEqual(["Checking the notes."]);
    await page.locator(".tool[data-call-id=w1] button.approve").click();
    await poll(() => page.locator("#status").textContent()).toBe("Done.");
    expect(await assistantTexts(page)).toStrictEqual(["Checking the notes.", "Saved it."]);
    expect(await page.locator(".tool[data-call-id=w1] .tool-result").textContent()).toBe('Saved "Task".');
    expect(await page.locator(".tool button").count()).toBe(0);
    expect(await page.locator("#viewer-link").getAttribute("href")).toMatch(/\?file=[\w-]+\.jsonl#token=/);
    expect(await page.locator("#error").isHidden()).toBe(true);
  });

  it("a reload mid-run shows what was streamed once, then the rest, without loss or duplication", async () => {
    const held = gate();
    const page = await openChat(
      pacedModel([
        {
          pieces: ["One ", held.wait, "two."],
          then: [{ type: "tool_call", id: "l1", name: "list_notes", input: {} }],
        },
        { pieces: ["Three."] },
      ]),
    );
    await run(page, "count");
    await poll(() => assistantTexts(page)).toStrictEqual(["One "]);
    await page.reload();
    await poll(() => assistantTexts(page)).toStrictEqual(["One "]);
    expect(await page.locator(".bubble.user").allTextContents()).toStrictEqual(["count"]);
    held.open();
    await poll(() => page.locator("#status").textContent()).toBe("Done.");
    expect(await assistantTexts(page)).toStrictEqual(["One two.", "Three."]);
    expect(await page.locator(".tool").count()).toBe(1);
    expect(await page.locator(".tool[data-call-id=l1] .tool-result").textContent()).toBe("No notes yet.");
    // A reload after the end shows the same transcript.
    await page.reload();
    await poll(() => page.locator("#status").textContent()).toBe("Done.");
    expect(await assistantTexts(page)).toStrictEqual(["One two.", "Three."]);
  });

  it("a session waiting for approval is listed on a fresh page (the store's paused sessions); opened after the registry forgot its run, it is read from the log with its buttons", async () => {
    const page = await openChat(
      pacedModel([
        {
          pieces: ["Writing."],
          then: [{ type: "tool_call", id: "p1", name: "write_note", input: { title: "A", text: "b" } }],
        },
        { pieces: ["Saved."] },
      ]),
      false,
      0,
    );
    await run(page, "note it");
    await poll(() => page.locator("#status").textContent()).toBe("Waiting for your approval.");
    await page.goto(new URL("/", page.url()).toString());
    await poll(() => page.locator("#waiting-list a").allTextContents()).toStrictEqual(["note it"]);
    await page.locator("#waiting-list a").click();
    await poll(() => page.locator("#status").textContent()).toBe("Waiting for your approval.");
    expect(await assistantTexts(page)).toStrictEqual(["Writing."]);
    await page.locator(".tool[data-call-id=p1] button.approve").click();
    await poll(() => page.locator("#status").textContent()).toBe("Done.");
    expect(await assistantTexts(page)).toStrictEqual(["Writing.", "Saved."]);
    await page.goto(new URL("/", page.url()).toString());
    await poll(() => page.locator("#waiting").isHidden()).toBe(true);
  });

  it("readEventStream runs in the browser: a run's events read with the page's fetch, and a refusal thrown with the server's message", async () => {
    const page = await openChat(pacedModel([{ pieces: ["Hel", "lo."] }]));
    await run(page, "greet");
    await poll(() => page.locator("#status").textContent()).toBe("Done.");
    // The module as it is, its types stripped, served beside the page (its one import too).
    await page.route("**/__src/**", async (route) => {
      const path = new URL(route.request().url()).pathname.replace("/__src/", "");
      const source = await readFile(join(root, "src", path), "utf8");
      await route.fulfill({ contentType: "text/javascript", body: stripTypeScriptTypes(source) });
    });
    const runId = new URL(page.url()).searchParams.get("session") + ":1";
    // A string, so the test runner leaves its dynamic import to the browser.
    const result = await page.evaluate<{
      events: { type: string; delta?: string }[];
      ids: string[];
      refusal: string;
    }>(`(async () => {
      const { readEventStream } = await import("/__src/http/read-event-stream.ts");
      const ids = [];
      const events = [];
      const response = await fetch("/api/runs/" + encodeURIComponent(${JSON.stringify(runId)}) + "/events");
      for await (const event of readEventStream(response, { onId: (id) => ids.push(id) })) events.push(event);
      let refusal = "";
      try {
        for await (const event of readEventStream(await fetch("/api/runs/nobody%3A1/events"))) refusal = event.type;
      } catch (error) {
        refusal = error.message;
      }
      return { events, ids, refusal };
    })()`);
    expect(result.events.filter((event) => event.type === "text-delta").map((event) => event.delta)).toStrictEqual([
      "Hel",
      "lo.",
    ]);
    expect(result.events.at(-1)).toMatchObject({ type: "run-end", outcome: "done" });
    expect(result.ids).toHaveLength(result.events.length);
    expect(result.refusal).toBe("readEventStream: the server answered 404: no such run");
  });

  it("a failed run and a refused request show as errors on the page", async () => {
    const page = await openChat(pacedModel([{ error: "the model exploded" }]));
    await run(page, "   ");
    await poll(() => page.locator("#error").textContent()).toBe("Error: type a task first");
    await run(page, "go");
    await poll(() => page.locator("#error").textContent()).toContain("the model exploded");
    expect(await page.locator("#status").textContent()).toBe("Failed.");
  });

  it(
    "two browsers side by side (two contexts, each its own cookies): the second sees nothing of the first's notes, session or log",
    { timeout: 120_000 },
    async () => {
      const held = gate();
      const directory = await mkdtemp(join(tmpdir(), "web-chat-"));
      directories.push(directory);
      const chat = await startWebChat({
        invokeModel: pacedModel([
          {
            pieces: ["Writing it down."],
            then: [{ type: "tool_call", id: "w1", name: "write_note", input: { title: "Task", text: "milk" } }],
          },
          { pieces: ["Saved it."] },
          {
            pieces: ["Looking.", held.wait],
            then: [{ type: "tool_call", id: "l1", name: "list_notes", input: {} }],
          },
          { pieces: ["Listed."] },
        ]),
        directory,
        viewer: true,
      });
      chats.push(chat);
      const [first, second] = [await browser.newContext(), await browser.newContext()];
      try {
        const open = async (context: BrowserContext, url: string): Promise<Page> => {
          const page = await context.newPage();
          page.on("pageerror", (error) => pageErrors.push(error.message));
          await page.goto(url);
          return page;
        };
        const pageA = await open(first, chat.url);
        await run(pageA, "remember milk");
        await pageA.locator(".tool[data-call-id=w1] button.approve").click();
        await poll(() => pageA.locator("#status").textContent()).toBe("Done.");
        const sessionA = new URL(pageA.url()).searchParams.get("session")!;

        // The second browser's chat: its own notes (none), nothing of the first's on its page.
        const pageB = await open(second, chat.url);
        await run(pageB, "what notes are there?");
        await poll(() => assistantTexts(pageB)).toStrictEqual(["Looking."]);
        held.open();
        await poll(() => pageB.locator("#status").textContent()).toBe("Done.");
        expect(await pageB.locator(".tool[data-call-id=l1] .tool-result").textContent()).toBe("No notes yet.");
        expect(await pageB.locator("body").innerText()).not.toContain("milk");
        const viewerHref = await pageB.locator("#viewer-link").getAttribute("href");

        // The first browser's session, opened by its address in the second: refused.
        await pageB.goto(new URL(`/?session=${encodeURIComponent(sessionA)}`, chat.url).toString());
        await poll(() => pageB.locator("#error").textContent()).toBe("Error: no such session");
        expect(await pageB.locator("body").innerText()).not.toContain("milk");

        // The second browser's viewer link shows its own session.
        const viewer = await open(second, viewerHref!);
        await poll(() => viewer.locator("body").innerText()).toContain("what notes are there?");
        expect(await viewer.locator("body").innerText()).not.toContain("milk");
        const otherLog = new URL(viewerHref!);
        otherLog.search = `?file=${encodeURIComponent(`${sessionA}.jsonl`)}`;
        // A viewer of one log shows that log whatever file is asked for, and its API refuses another.
        await viewer.goto(otherLog.toString());
        await poll(() => viewer.locator("body").innerText()).toContain("what notes are there?");
        expect(await viewer.locator("body").innerText()).not.toContain("milk");
        // A string, as the DOM's names are not in the tests' types.
        const asked = await viewer.evaluate<{ status: number; body: string }>(`(async () => {
          const token = new URLSearchParams(location.hash.slice(1)).get("token") ?? "";
          const response = await fetch("/api/entries?file=" + encodeURIComponent(${JSON.stringify(`${sessionA}.jsonl`)}), {
            headers: { "x-viewer-token": token },
          });
          return { status: response.status, body: await response.text() };
        })()`);
        expect(asked.status).not.toBe(200);
        expect(asked.body).not.toContain("milk");
      } finally {
        await first.close();
        await second.close();
      }
    },
  );
});
