// Each adapter is loaded on its own (a worker process imports only the library it measures).
import type { Adapter } from "../common.ts";

export const ADAPTERS = {
  ours: async () => (await import("./ours.ts")).ours,
  "ai-sdk": async () => (await import("./ai-sdk.ts")).aiSdk,
  "openai-agents": async () => (await import("./openai-agents.ts")).openaiAgents,
  "pi-agent-core": async () => (await import("./pi-agent-core.ts")).piAgentCore,
  strands: async () => (await import("./strands.ts")).strands,
  handwritten: async () => (await import("./handwritten.ts")).handwritten,
} satisfies Record<string, () => Promise<Adapter>>;

export type AdapterId = keyof typeof ADAPTERS;

export function isAdapterId(id: string): id is AdapterId {
  return Object.hasOwn(ADAPTERS, id);
}
