import { describe, expect, it } from "vitest";
import { agentLoop, describeError, initSession, type AgentEvent } from "simple-agent-loop";
import { anthropic } from "simple-agent-loop/anthropic";
import { openaiChat } from "simple-agent-loop/openai";
import { commandEnvironment } from "../src/cli/tools/command-environment.ts";

const password = "hunter2-s3cret-pw";

describe("credentials in a URL never leave in what the library reports", () => {
  for (const [name, model] of [
    [
      "anthropic",
      anthropic({ model: "m", apiKey: "sk-test-key-123456", baseURL: `http://admin:${password}@127.0.0.1:9` }),
    ],
    [
      "openai-chat",
      openaiChat({ model: "m", apiKey: "sk-test-key-123456", baseURL: `http://admin:${password}@127.0.0.1:9/v1` }),
    ],
  ] as const) {
    it(`${name}: a base URL with user:password@ is scrubbed from the error, the run-end event and the log`, async () => {
      const events: AgentEvent[] = [];
      const lines: string[] = [];
      const error = await agentLoop(model, [], initSession("s", "u"), {
        retry: false,
        onEvent: (event) => events.push(event),
        logger: (line) => lines.push(line),
      }).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toBeDefined();
      const reported = [describeError(error), String((error as Error).message), JSON.stringify(events), ...lines].join(
        "\n",
      );
      expect(reported).not.toContain(password);
      expect(events.at(-1)).toMatchObject({ type: "run-end" });
    });
  }

  it("describeError scrubs the credentials of every URL in a text", () => {
    const text = describeError(
      new Error(`failed: postgres://u:${password}@db:5432/x and https://tok${password}@host/p`),
    );
    expect(text).not.toContain(password);
    expect(text).toContain("postgres://***@db:5432/x");
  });
});

describe("the bash tool's environment drops values that carry credentials, whatever the name", () => {
  it("HTTPS_PROXY and DATABASE_URL with user:password@ are dropped; the same without credentials are kept", () => {
    const environment = commandEnvironment({
      HTTPS_PROXY: `http://user:${password}@proxy:8080`,
      DATABASE_URL: `postgres://app:${password}@db:5432/prod`,
      GIT_REMOTE: `https://x-access-token:${password}@github.com/o/r.git`,
      HTTP_PROXY: "http://proxy:8080",
      HOME: "/home/u",
    });
    expect(environment).toStrictEqual({ HTTP_PROXY: "http://proxy:8080", HOME: "/home/u" });
    expect(commandEnvironment({ DATABASE_URL: `postgres://app:${password}@db/x` }, ["DATABASE_URL"])).toStrictEqual({
      DATABASE_URL: `postgres://app:${password}@db/x`,
    });
  });
});
