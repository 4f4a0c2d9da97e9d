// examples/restate-worker.ts as its header says to use it: a real restate-server, the example run
// as its own process (no API key: the scripted model), then the header's curl steps, by fetch.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSession } from "simple-agent-loop/store";
import { freePort } from "../helpers.ts";
import { startRestateServer, waitFor, type RestateServer } from "./restate-server.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));

let server: RestateServer;
let worker: ChildProcess | undefined;
let workerOutput = "";

beforeAll(async () => {
  server = await startRestateServer();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    PORT: String(await freePort()),
    RESTATE_ADMIN_URL: server.adminUrl,
  };
  worker = spawn(
    `${root}node_modules/.bin/node`,
    ["--conditions=simple-agent-loop-source", "examples/restate-worker.ts"],
    { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  worker.stdout!.setEncoding("utf8").on("data", (chunk: string) => (workerOutput += chunk));
  worker.stderr!.setEncoding("utf8").on("data", (chunk: string) => (workerOutput += chunk));
  // The example registers itself: the agent's handlers appear on the server.
  await waitFor(
    async () => {
      const reply = await fetch(`${server.adminUrl}/services/agent`).catch(() => undefined);
      return reply?.ok === true;
    },
    60_000,
    () => `the example did not register:\n${workerOutput}`,
  );
}, 120_000);

afterAll(async () => {
  if (worker !== undefined && worker.exitCode === null) {
    const exited = new Promise((resolve) => worker!.once("exit", resolve));
    worker.kill("SIGKILL");
    await exited;
  }
  await server?.stop();
}, 60_000);

const ingress = (path: string, body: unknown): Promise<Response> =>
  fetch(`${server.ingressUrl}/agent/demo/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("examples/restate-worker.ts", () => {
  it("runs the header's steps: send, wait for approval, approve, export the session", async () => {
    const sent = await ingress("run/send", { message: "Deploy version 1.2 to staging" });
    expect(sent.status, await sent.clone().text()).toBeLessThan(300);
    const { invocationId } = (await sent.json()) as { invocationId: string };

    let pending: unknown[] = [];
    await waitFor(
      async () => {
        const reply = await ingress("pendingApprovals", {});
        pending = reply.ok ? ((await reply.json()) as unknown[]) : [];
        return pending.length > 0;
      },
      30_000,
      () => `no approval asked for:\n${workerOutput}`,
    );
    expect(pending).toStrictEqual([
      { id: "deploy_1", path: "deploy_1", name: "deploy", input: { env: "staging", version: "1.2" } },
    ]);

    const resolved = await ingress("resolveApproval", { id: "deploy_1", approved: true });
    expect(await resolved.json()).toStrictEqual({ resolved: ["deploy_1"] });
    const result = await fetch(`${server.ingressUrl}/restate/invocation/${invocationId}/attach`);
    expect(await result.json()).toStrictEqual({
      outcome: "done",
      response: 'Deploy result: "deployed 1.2 to staging"',
    });

    const exported = await ingress("export", {});
    expect(exported.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    const dir = mkdtempSync(join(tmpdir(), "restate-example-"));
    writeFileSync(join(dir, "demo.jsonl"), await exported.text());
    const session = await loadSession(join(dir, "demo.jsonl"));
    rmSync(dir, { recursive: true, force: true });
    expect(session.messages.map((message) => ("role" in message ? message.role : message.type))).toStrictEqual([
      "user",
      "tool_call",
      "tool_result",
      "tool_call",
      "tool_result",
      "assistant",
    ]);
  });
});
