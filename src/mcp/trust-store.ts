import type { JsonObject } from "../session.ts";
import { readJsonFile, serially, writeJsonFile } from "./json-file.ts";

/** A tool's trusted definition: its `toolFingerprint` and the definition itself (to show a diff). */
export type McpPin = { fingerprint: string; definition: JsonObject };

/** The trusted definition of each tool, by server key, then by the tool's MCP name. */
export type McpPins = { [server: string]: { [tool: string]: McpPin } };

/**
 * Where `connectMcp` keeps the definitions of tools the user trusts (`trust` option). `load` is
 * called once per connection; `save` after each change with all pins (the same shape `load`
 * returns). Either may be async.
 */
export type McpTrustStore = {
  load: () => McpPins | Promise<McpPins>;
  save: (pins: McpPins) => void | Promise<void>;
};

/** Pins kept in memory, starting from `pins` (copied): the default, which trusts what each new connection sees first. */
export function memoryTrustStore(pins: McpPins = {}): McpTrustStore {
  let kept = structuredClone(pins);
  return {
    load: () => structuredClone(kept),
    save: (next) => {
      kept = structuredClone(next);
    },
  };
}

/**
 * Pins kept in one JSON file at `path` (the CLI's is `<home>/mcp-pins.json`), written atomically
 * with mode 0600. A missing file holds no pins; one that is not a JSON object makes `load` throw.
 */
export function fileTrustStore(path: string): McpTrustStore {
  const queue = serially();
  return {
    load: async () => pinsOf(await readJsonFile(path)),
    save: (pins) => queue(() => writeJsonFile(path, pins)),
  };
}

/** The pin of `tool` on `server`, read from own keys only (server and tool names are untrusted). */
export function pinOf(pins: McpPins, server: string, tool: string): McpPin | undefined {
  return Object.hasOwn(pins, server) && Object.hasOwn(pins[server]!, tool) ? pins[server]![tool] : undefined;
}

/** Sets the pin of `tool` on `server` as own keys, so a name like "__proto__" is a key like any other. */
export function setPin(pins: McpPins, server: string, tool: string, pin: McpPin): void {
  if (!Object.hasOwn(pins, server)) define(pins, server, {});
  define(pins[server]!, tool, pin);
}

// Entries of another shape (hand-edited, from another version) are left out: such a tool is then
// new, pinned again as it is listed.
function pinsOf(file: Record<string, unknown> | undefined): McpPins {
  const pins: McpPins = {};
  for (const [server, tools] of Object.entries(file ?? {})) {
    if (typeof tools !== "object" || tools === null) continue;
    const kept: McpPins[string] = {};
    for (const [name, pin] of Object.entries(tools)) {
      const { fingerprint, definition } = (typeof pin === "object" && pin !== null ? pin : {}) as Partial<McpPin>;
      if (typeof fingerprint === "string" && typeof definition === "object" && definition !== null)
        define(kept, name, { fingerprint, definition });
    }
    define(pins, server, kept);
  }
  return pins;
}

// Names come from a file: defined, not assigned, so "__proto__" stays a key.
function define<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
