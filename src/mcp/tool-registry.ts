import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject } from "../session.ts";
import type { Tool } from "../tools/tool.ts";
import { codeModeName } from "../tools/code-mode/code-mode-option.ts";
import { recallOutputName } from "../tools/recall-output.ts";
import { searchToolsName } from "../tools/search-tools.ts";
import { McpConfigError } from "./errors.ts";
import { checkToolSchema, loopTool, loopToolName, nameClash, type ToolServer } from "./mcp-tools.ts";
import { toolDefinition, toolFingerprint } from "./tool-fingerprint.ts";
import { pinOf, setPin, type McpPin, type McpPins, type McpTrustStore } from "./trust-store.ts";

/** A tool whose definition differs from the one trusted: not offered until `trustTool` pins it. */
export type McpHeldTool = {
  server: string;
  /** The tool's MCP name. */
  name: string;
  reason: "changed";
  /** The trusted definition (see `toolDefinition`). */
  before: JsonObject;
  /** The definition the server lists now. */
  after: JsonObject;
};

/** What a new listing of one server changed, by MCP tool name (see `onToolsChanged`). */
export type McpToolsChange = { server: string; added: string[]; removed: string[]; changed: string[] };

/** One server's side of the registry: how it is reached, what it lists, whether its tools are deferred. */
export type RegisteredServer = ToolServer & { deferred: boolean; listed: McpTool[] };

/**
 * The loop tools of every server, kept up to date as servers list their tools again, with the
 * trust checks: each tool's fingerprint is compared with its pin, new tools are pinned, changed
 * ones held. A loop tool object stays the same while its definition does, and refuses calls once
 * its tool is removed or held (a run may hold it still).
 */
export type ToolRegistry = {
  /** The tools offered now: every server's, in configuration order, held tools left out. */
  tools: () => Tool[];
  heldTools: () => McpHeldTool[];
  /** Takes a server's new listing; resolves with what changed once pins are saved. */
  update: (server: string, listed: McpTool[]) => Promise<McpToolsChange>;
  /** Pins the definition of a held tool as listed now and offers it. */
  trust: (server: string, name: string) => Promise<void>;
};

type Listing = { tool: McpTool; fingerprint: string };

/** What the registry keeps: the pins, each server's listing, the held tools, the loop tools made. */
type RegistryState = {
  servers: readonly RegisteredServer[];
  prefix: boolean;
  trust: McpTrustStore | undefined;
  pins: McpPins;
  listings: Map<string, Map<string, Listing>>;
  held: Map<string, Map<string, McpHeldTool>>;
  /** Loop tools by server, MCP name, fingerprint and name: the same object while the definition is. */
  made: Map<string, Tool>;
  offered: Tool[];
};

/** `trust: undefined` turns drift checks off. A tool that cannot be offered at connect throws. */
export async function toolRegistry(
  servers: readonly RegisteredServer[],
  options: { prefix: boolean; trust: McpTrustStore | undefined },
): Promise<ToolRegistry> {
  const state: RegistryState = {
    servers,
    prefix: options.prefix,
    trust: options.trust,
    pins: options.trust === undefined ? {} : await options.trust.load(),
    listings: new Map(),
    held: new Map(),
    made: new Map(),
    offered: [],
  };
  for (const owner of servers)
    await savePins(state, owner.server, apply(state, owner.server, owner.listed, true).newPins);
  rebuild(state, true);
  return {
    tools: () => state.offered,
    heldTools: () => [...state.held.values()].flatMap((tools) => [...tools.values()]),
    update: async (server, listed) => {
      const { change, newPins } = apply(state, server, listed, false);
      rebuild(state, false);
      await savePins(state, server, newPins);
      return change;
    },
    trust: async (server, name) => {
      const tool = state.held.get(server)?.get(name);
      const listing = state.listings.get(server)?.get(name);
      if (tool === undefined || listing === undefined)
        throw new McpConfigError(`MCP server "${server}" has no held tool named "${name}"`, { server });
      const pin = { fingerprint: listing.fingerprint, definition: tool.after };
      setPin(state.pins, server, name, pin);
      state.held.get(server)!.delete(name);
      rebuild(state, false);
      await savePins(state, server, [[name, pin]]);
    },
  };
}

/**
 * Takes a server's listing: what changed since the last, which tools differ from their pins
 * (held), which are new (pinned). At connect (`strict`) a tool whose schema cannot be taken fails
 * the connection; later it is left out, and the other tools stay.
 */
function apply(
  state: RegistryState,
  server: string,
  listed: McpTool[],
  strict: boolean,
): { change: McpToolsChange; newPins: [string, McpPin][] } {
  const before = state.listings.get(server) ?? new Map<string, Listing>();
  const after = new Map<string, Listing>();
  const held = new Map<string, McpHeldTool>();
  const newPins: [string, McpPin][] = [];
  const change: McpToolsChange = { server, added: [], removed: [], changed: [] };
  for (const tool of listed) {
    if (after.has(tool.name)) continue;
    try {
      checkToolSchema(server, tool);
    } catch (error) {
      if (strict) throw error;
      continue;
    }
    const fingerprint = toolFingerprint(tool);
    after.set(tool.name, { tool, fingerprint });
    const previous = before.get(tool.name);
    if (previous === undefined) change.added.push(tool.name);
    else if (previous.fingerprint !== fingerprint) change.changed.push(tool.name);
    if (state.trust === undefined) continue;
    const pin = pinOf(state.pins, server, tool.name);
    if (pin === undefined) newPins.push([tool.name, { fingerprint, definition: toolDefinition(tool) }]);
    else if (pin.fingerprint !== fingerprint)
      held.set(tool.name, {
        server,
        name: tool.name,
        reason: "changed",
        before: pin.definition,
        after: toolDefinition(tool),
      });
  }
  for (const name of before.keys()) if (!after.has(name)) change.removed.push(name);
  state.listings.set(server, after);
  state.held.set(server, held);
  for (const [name, pin] of newPins) setPin(state.pins, server, name, pin);
  return { change, newPins };
}

/** Makes the offered list again: every server's tools that are not held, reusing the loop tools made. */
function rebuild(state: RegistryState, strict: boolean): void {
  const owners = new Map<string, { server: string; tool: string }>();
  const tools: Tool[] = [];
  const kept = new Map<string, Tool>();
  for (const owner of state.servers) {
    for (const [mcpName, { tool, fingerprint }] of state.listings.get(owner.server) ?? []) {
      if (state.held.get(owner.server)?.has(mcpName) === true) continue;
      const name = loopToolName(owner.server, mcpName, state.prefix);
      // A server does not choose what answers the loop's own tools (searching the deferred tools,
      // reading back a cleared output, running a program): under such a name it would.
      if (loopOwnNames.has(name)) {
        if (strict) throw loopOwnName(name, owner.server, mcpName);
        continue;
      }
      const clash = owners.get(name);
      if (clash !== undefined) {
        if (strict) throw nameClash(name, clash, { server: owner.server, tool: mcpName }, state.prefix);
        continue;
      }
      const key = `${owner.server}\0${mcpName}\0${fingerprint}\0${name}`;
      let offer = state.made.get(key);
      if (offer === undefined) {
        offer = loopTool(name, owner, tool, callCheck(state, owner.server, mcpName, fingerprint));
        if (owner.deferred) offer.deferred = true;
      }
      owners.set(name, { server: owner.server, tool: mcpName });
      kept.set(key, offer);
      tools.push(offer);
    }
  }
  state.made = kept;
  state.offered = tools;
}

const loopOwnNames: ReadonlySet<string> = new Set([searchToolsName, recallOutputName, codeModeName]);

function loopOwnName(name: string, server: string, tool: string): McpConfigError {
  return new McpConfigError(
    `MCP tool "${tool}" of server "${server}" would be named "${name}", the name of a tool the loop offers itself; pass { prefix: true } to name tools <server>__<tool>`,
    { server },
  );
}

// A loop tool made earlier may be called by a run that still holds it: it reaches the server only
// while its tool is listed and not held.
function callCheck(state: RegistryState, server: string, name: string, fingerprint: string): () => string | undefined {
  return () => {
    const current = state.listings.get(server)?.get(name);
    if (current === undefined) return `MCP tool "${name}" was removed by server "${server}"; it cannot be called`;
    if (
      state.held.get(server)?.has(name) === true ||
      (state.trust !== undefined && current.fingerprint !== fingerprint)
    )
      return `MCP tool "${name}" of server "${server}" changed since it was trusted and is held until trusted again; it was not called`;
    return undefined;
  };
}

// Saved as one server's new pins merged into what the store holds now: two connections sharing a
// store each add their own.
async function savePins(state: RegistryState, server: string, newPins: [string, McpPin][]): Promise<void> {
  if (state.trust === undefined || newPins.length === 0) return;
  const stored = await state.trust.load();
  for (const [name, pin] of newPins) setPin(stored, server, name, pin);
  await state.trust.save(stored);
}
