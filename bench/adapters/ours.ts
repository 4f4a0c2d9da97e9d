// simple-agent-loop (this repository, built to ../dist): a plain function is the model.
import * as library from "simple-agent-loop";
import type { AgentLoopOptions, InvokeModel, Message, ModelMessage } from "simple-agent-loop";
import { ADD_TOOL, FINAL_TEXT, SYSTEM_PROMPT, USER_PROMPT, callId, type Adapter } from "../common.ts";

/** What the adapter needs of the library: the package, or another checkout's `src/index.ts` (bench/allocation.ts). */
export type Library = Pick<typeof library, "agentLoop" | "initSession">;

function lastToolResultId(messages: readonly Message[]): string | undefined {
  const last = messages[messages.length - 1];
  return last !== undefined && "type" in last && last.type === "tool_result" ? last.id : undefined;
}

// A listener that takes every event and keeps none: what a run pays once someone listens.
const ignoreEvent = (): void => undefined;

/**
 * The adapter over `lib`, with `options` added to every run (bench/allocation.ts turns the
 * defaults off with them). Every default is on otherwise: the script's calls differ from turn to
 * turn, so the loop guard has nothing to refuse.
 */
export function oursAdapter(lib: Library, options: Partial<AgentLoopOptions> = {}): Adapter {
  return {
    name: "simple-agent-loop",
    packageName: "simple-agent-loop",
    validation: "JSON Schema (@cfworker/json-schema)",
    modelHook: "invokeModel(tools, session) function returning generic messages",
    async run(w) {
      const invokeModel: InvokeModel = (_tools, session) => {
        const n = w.nextCall();
        w.checkLastResult(n, lastToolResultId(session.messages));
        if (w.wantsTools(n)) {
          const calls: ModelMessage[] = [];
          for (let k = 0; k < w.callsPerTurn; k++)
            calls.push({ type: "tool_call", id: callId(n, k), name: "add", input: w.input(n, k) });
          return calls;
        }
        w.checkHistory(n, session.messages.length);
        return [{ role: "assistant", content: FINAL_TEXT }];
      };
      const session = lib.initSession(SYSTEM_PROMPT, USER_PROMPT);
      await lib.agentLoop(invokeModel, [ADD_TOOL], session, {
        toolHandlers: { add: (input) => w.tool(input) },
        maxIterations: w.turns + 5,
        // The concurrency benchmark's --events: the cost of a listener that sees every event.
        ...(process.env.BENCH_LISTEN_TO_EVENTS === "1" ? { onEvent: ignoreEvent } : {}),
        ...options,
      });
      const last = session.messages[session.messages.length - 1];
      const text = last !== undefined && "role" in last && typeof last.content === "string" ? last.content : "";
      return { text, keep: session };
    },
  };
}

export const ours: Adapter = oursAdapter(library);
