import { mkdtemp, readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fileTokenStore, memoryTokenStore, type McpTokenStore } from "simple-agent-loop/mcp";

const record = {
  tokens: { access_token: "at-1", token_type: "Bearer", refresh_token: "rt-1" },
  client: { client_id: "client-1" },
};

async function roundTrip(store: McpTokenStore): Promise<void> {
  expect(await store.get("https://a.example/mcp")).toBeUndefined();
  await store.set("https://a.example/mcp", record);
  await store.set("__proto__", { tokens: { access_token: "x", token_type: "Bearer" } });
  expect(await store.get("https://a.example/mcp")).toStrictEqual(record);
  expect(({} as Record<string, unknown>)["tokens"]).toBeUndefined();
  await store.delete("https://a.example/mcp");
  expect(await store.get("https://a.example/mcp")).toBeUndefined();
}

describe("MCP token stores", () => {
  it("memoryTokenStore keeps records by server URL", async () => {
    await roundTrip(memoryTokenStore());
  });

  it("fileTokenStore writes one JSON file, mode 0600, and refuses to overwrite a damaged one", async () => {
    const directory = await mkdtemp(join(tmpdir(), "mcp-auth-"));
    const path = join(directory, "home", "mcp-auth.json");
    await roundTrip(fileTokenStore(path));
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    await fileTokenStore(path).set("https://b.example/mcp", record);
    expect(JSON.parse(await readFile(path, "utf8"))["https://b.example/mcp"]).toStrictEqual(record);
    // Concurrent writes from one store all land.
    const store = fileTokenStore(path);
    await Promise.all(["1", "2", "3"].map(async (n) => store.set(`https://c${n}.example/mcp`, record)));
    expect(Object.keys(JSON.parse(await readFile(path, "utf8")) as object)).toEqual(
      expect.arrayContaining(["https://c1.example/mcp", "https://c2.example/mcp", "https://c3.example/mcp"]),
    );
    await writeFile(path, "not json");
    await expect(fileTokenStore(path).get("https://b.example/mcp")).rejects.toThrow(/not valid JSON/);
    await expect(fileTokenStore(path).set("https://b.example/mcp", record)).rejects.toThrow(/not valid JSON/);
    expect(await readFile(path, "utf8")).toBe("not json");
  });
});
