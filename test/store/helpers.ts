import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import type { Session } from "simple-agent-loop";

const created: string[] = [];
afterAll(() => {
  for (const directory of created.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** A fresh temporary directory, removed after the test file. */
export function tempDir(): string {
  const directory = mkdtempSync(join(tmpdir(), "simple-agent-loop-store-"));
  created.push(directory);
  return directory;
}

/** What a crash may leave: every tool_result follows its tool_call, and no call has two results. */
export function expectValidLog(session: Session): void {
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const message of session.messages) {
    if (!("type" in message)) continue;
    if (message.type === "tool_call") {
      if (calls.has(message.id)) throw new Error(`duplicate tool_call ${message.id}`);
      calls.add(message.id);
    } else if (message.type === "tool_result") {
      if (!calls.has(message.id)) throw new Error(`tool_result ${message.id} without its tool_call before it`);
      if (answered.has(message.id)) throw new Error(`tool_call ${message.id} answered twice`);
      answered.add(message.id);
    }
  }
}

/** The ids of the tool calls that have a result. */
export function answeredIds(session: Session): Set<string> {
  return new Set(
    session.messages.flatMap((message) => ("type" in message && message.type === "tool_result" ? [message.id] : [])),
  );
}

/** A collector for `onWarning`. */
export function warningsCollector(): { warnings: string[]; onWarning: (message: string) => void } {
  const warnings: string[] = [];
  return { warnings, onWarning: (message) => void warnings.push(message) };
}
