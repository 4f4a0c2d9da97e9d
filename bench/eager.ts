// Wall time saved by starting tools while the model still streams, measured:
// a response that streams 3 tool calls over 2 s (one at 0.5 s, 1.0 s and 1.5 s, the response
// ends at 2 s), each tool taking 1 s, then a final answer. Eager starts on and off.
//
//   npm run eager
import { agentLoop, initSession, type ModelStreamEvent } from "simple-agent-loop";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function* toolTurn(): AsyncGenerator<ModelStreamEvent> {
  for (const id of ["a", "b", "c"]) {
    await sleep(500);
    yield {
      type: "message",
      message: { type: "tool_call", id, name: "fetch_page", input: { url: `https://example.com/${id}` } },
    };
  }
  await sleep(500);
  yield { type: "response-end", stopReason: "tool_use" };
}

async function* answerTurn(): AsyncGenerator<ModelStreamEvent> {
  yield { type: "message", message: { role: "assistant", content: "Read all three." } };
  yield { type: "response-end", stopReason: "end_turn" };
}

async function run(eagerTools: boolean): Promise<number> {
  let call = 0;
  const started = performance.now();
  await agentLoop(() => (call++ === 0 ? toolTurn() : answerTurn()), [], initSession("s", "read three pages"), {
    eagerTools,
    toolHandlers: { fetch_page: () => sleep(1000).then(() => "page text") },
  });
  return performance.now() - started;
}

const results: Record<string, number[]> = { eager: [], waiting: [] };
for (let i = 0; i < 3; i++) {
  results.eager!.push(await run(true));
  results.waiting!.push(await run(false));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[1]!;
const eager = median(results.eager!);
const waiting = median(results.waiting!);
console.log("3 tool calls streamed over 2 s, tools of 1 s each (median of 3 runs)");
console.log(`eager starts:      ${eager.toFixed(0)} ms`);
console.log(`wait for response: ${waiting.toFixed(0)} ms`);
console.log(
  `saved:             ${(waiting - eager).toFixed(0)} ms (${(((waiting - eager) / waiting) * 100).toFixed(0)}%)`,
);
