import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The workspace MCP configs the user agreed to start, each remembered with a hash of its content:
 * `$SIMPLE_AGENT_LOOP_HOME/trusted-mcp.json`. A workspace's config starts commands, and a cloned
 * repository can bring one; it runs only once the user said so, and again only while unchanged.
 */
export type McpTrust = {
  /** Whether this config, with exactly this content, was trusted. */
  trusted: (path: string, content: string) => boolean;
  /** Remembers this config with this content (a changed file asks again). */
  trust: (path: string, content: string) => void;
};

export function mcpTrust(home: string): McpTrust {
  const file = join(home, "trusted-mcp.json");
  const read = (): Record<string, string> => {
    try {
      const parsed = JSON.parse(readFileSync(file, "utf8")) as unknown;
      return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
        ? (parsed as Record<string, string>)
        : {};
    } catch {
      // Missing or unreadable: nothing is trusted, which only means asking again.
      return {};
    }
  };
  return {
    trusted: (path, content) => read()[path] === digest(content),
    trust: (path, content) => {
      const all = { ...read(), [path]: digest(content) };
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      // Written whole, then renamed: a crash leaves the old list, never half of one.
      const temporary = `${file}.${process.pid}.tmp`;
      writeFileSync(temporary, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
      renameSync(temporary, file);
    },
  };
}

function digest(content: string): string {
  return `sha256:${createHash("sha256").update(content).digest("hex")}`;
}
