import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { serveViewer, type SessionsResponse, type SessionSummary, type Viewer } from "simple-agent-loop/viewer";
import { address, line, tempDir } from "./helpers.ts";

const at = (second: number): string => new Date(Date.UTC(2025, 0, 1, 0, 0, second)).toISOString();
const message = (value: Record<string, unknown>, second: number) =>
  line({ type: "message", message: { ...value, ts: at(second) } });
const workspace = (path: string, second: number) =>
  line({ type: "custom", customType: "workspace", ts: at(second), data: { workspace: path, model: "m" } });
const task = (content: string, second: number) => message({ role: "user", content }, second);
const answer = (stopReason: string, input: number, output: number, second: number) =>
  message(
    { role: "assistant", content: "answer", stopReason, usage: { inputTokens: input, outputTokens: output } },
    second,
  );
const call = (id: string, second: number, extra: Record<string, unknown> = {}) =>
  message(
    {
      type: "tool_call",
      id,
      name: "run",
      input: {},
      stopReason: "tool_use",
      usage: { inputTokens: 100, outputTokens: 10 },
      ...extra,
    },
    second,
  );
const result = (id: string, second: number) => message({ type: "tool_result", id, output: "ok" }, second);

async function list(viewer: Viewer): Promise<Record<string, Omit<SessionSummary, "file" | "size">>> {
  const response = await fetch(address(viewer, "api/sessions"));
  const body = (await response.json()) as SessionsResponse;
  return Object.fromEntries(body.sessions.map(({ file, size: _size, ...rest }) => [file, rest]));
}

describe("the session list: workspace, outcome, tokens and last activity of each log", () => {
  it("tells how each session's last run ended, where it worked and what it spent", async () => {
    const directory = tempDir();
    const logs: Record<string, string> = {
      "done.jsonl":
        workspace("/work/one", 0) +
        task("fix it", 1) +
        call("c1", 2) +
        result("c1", 3) +
        answer("end_turn", 1000, 50, 4),
      "moved.jsonl":
        workspace("/work/first", 0) +
        task("go", 1) +
        answer("end_turn", 10, 1, 2) +
        workspace("/work/second", 3) +
        task("again", 4) +
        answer("max_tokens", 20, 2, 5),
      "aborted.jsonl": task("go", 1) + answer("aborted", 5, 0, 2),
      "failed.jsonl": task("go", 1) + answer("error", 0, 0, 2),
      "paused.jsonl": task("deploy", 1) + call("c1", 2, { approval: { status: "pending" } }),
      "waiting-then-approved.jsonl":
        task("deploy", 1) +
        call("c1", 2, { approval: { status: "pending" } }) +
        line({
          type: "update",
          index: 1,
          reason: "approval",
          ts: at(3),
          message: { type: "tool_call", id: "c1", name: "run", input: {}, approval: { status: "approved" } },
        }),
      "running.jsonl": task("go", 1) + call("c1", 2) + result("c1", 3),
      "asked.jsonl": task("go", 1) + answer("end_turn", 1, 1, 2) + task("and then?", 3),
      "empty.jsonl": message({ role: "system", content: "s" }, 1),
    };
    for (const [name, text] of Object.entries(logs)) writeFileSync(join(directory, name), text);
    const viewer = await serveViewer(directory);
    try {
      const tokens = (input: number, output: number) => ({ input, output });
      expect(await list(viewer)).toStrictEqual({
        "done.jsonl": {
          messages: 4,
          lastActivity: at(4),
          title: "fix it",
          latestTask: "fix it",
          tasks: 1,
          workspace: "/work/one",
          outcome: "done",
          tokens: tokens(1100, 60),
          problems: 0,
        },
        "moved.jsonl": {
          messages: 4,
          lastActivity: at(5),
          title: "go",
          latestTask: "again",
          tasks: 2,
          workspace: "/work/second",
          outcome: "stopped",
          tokens: tokens(30, 3),
          problems: 0,
        },
        "aborted.jsonl": {
          messages: 2,
          lastActivity: at(2),
          title: "go",
          latestTask: "go",
          tasks: 1,
          workspace: null,
          outcome: "aborted",
          tokens: tokens(5, 0),
          problems: 0,
        },
        "failed.jsonl": {
          messages: 2,
          lastActivity: at(2),
          title: "go",
          latestTask: "go",
          tasks: 1,
          workspace: null,
          outcome: "error",
          tokens: tokens(0, 0),
          problems: 0,
        },
        "paused.jsonl": {
          messages: 2,
          lastActivity: at(2),
          title: "deploy",
          latestTask: "deploy",
          tasks: 1,
          workspace: null,
          outcome: "paused",
          tokens: tokens(100, 10),
          problems: 0,
        },
        "waiting-then-approved.jsonl": {
          messages: 2,
          lastActivity: at(3),
          title: "deploy",
          latestTask: "deploy",
          tasks: 1,
          workspace: null,
          outcome: "unfinished",
          tokens: tokens(100, 10),
          problems: 0,
        },
        "running.jsonl": {
          messages: 3,
          lastActivity: at(3),
          title: "go",
          latestTask: "go",
          tasks: 1,
          workspace: null,
          outcome: "unfinished",
          tokens: tokens(100, 10),
          problems: 0,
        },
        "asked.jsonl": {
          messages: 3,
          lastActivity: at(3),
          title: "go",
          latestTask: "and then?",
          tasks: 2,
          workspace: null,
          outcome: "unfinished",
          tokens: tokens(1, 1),
          problems: 0,
        },
        "empty.jsonl": {
          messages: 1,
          lastActivity: at(1),
          title: "",
          latestTask: "",
          tasks: 0,
          workspace: null,
          outcome: "empty",
          tokens: tokens(0, 0),
          problems: 0,
        },
      });
    } finally {
      await viewer.close();
    }
  });

  it("follows a log as it grows and when it is rewritten, and names a line too long to read without reading it", async () => {
    const directory = tempDir();
    const path = join(directory, "s.jsonl");
    writeFileSync(path, task("first", 1) + answer("end_turn", 10, 1, 2));
    const viewer = await serveViewer(directory, { maxLineBytes: 1000 });
    try {
      expect((await list(viewer))["s.jsonl"]).toMatchObject({
        messages: 2,
        outcome: "done",
        tokens: { input: 10, output: 1 },
        lastActivity: at(2),
      });
      appendFileSync(
        path,
        task("second", 3) +
          message(
            {
              role: "assistant",
              content: "x".repeat(5000),
              stopReason: "end_turn",
              usage: { inputTokens: 7, outputTokens: 7 },
            },
            4,
          ) +
          answer("end_turn", 20, 2, 5),
      );
      // The long line is named, not counted: it was not read.
      expect((await list(viewer))["s.jsonl"]).toStrictEqual({
        messages: 4,
        lastActivity: at(5),
        title: "first",
        latestTask: "second",
        tasks: 2,
        workspace: null,
        outcome: "done",
        tokens: { input: 30, output: 3 },
        problems: 1,
      });
      writeFileSync(path, workspace("/elsewhere", 10) + task("rewritten", 11));
      expect((await list(viewer))["s.jsonl"]).toStrictEqual({
        messages: 1,
        lastActivity: at(11),
        title: "rewritten",
        latestTask: "rewritten",
        tasks: 1,
        workspace: "/elsewhere",
        outcome: "unfinished",
        tokens: { input: 0, output: 0 },
        problems: 0,
      });
      // Listings at once give the same answer.
      const [first, second] = await Promise.all([list(viewer), list(viewer)]);
      expect(first).toStrictEqual(second);
    } finally {
      await viewer.close();
    }
  });

  it("does not count a background task's delivered outcome (a user message the user did not write) as a task", async () => {
    const directory = tempDir();
    writeFileSync(
      join(directory, "tasks.jsonl"),
      task("build it", 1) +
        call("c1", 2) +
        message(
          {
            type: "tool_result",
            id: "c1",
            output: { task: "task_1", status: "running" },
            task: { id: "task_1", status: "completed", onRestart: "lost", attempt: 1, startedAt: at(2), output: "ok" },
          },
          3,
        ) +
        answer("end_turn", 1, 1, 4) +
        message({ role: "user", content: "[background task task_1 (run) completed]\nok", deliversTask: "task_1" }, 5) +
        answer("end_turn", 1, 1, 6),
    );
    const viewer = await serveViewer(directory);
    try {
      expect((await list(viewer))["tasks.jsonl"]).toMatchObject({
        messages: 6,
        title: "build it",
        latestTask: "build it",
        tasks: 1,
        outcome: "done",
      });
    } finally {
      await viewer.close();
    }
  });
});
