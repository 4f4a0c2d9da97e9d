// A worker process for bench/restate.ts: the benchmark agent (a zero-latency scripted model, one
// cheap `add` call per turn for TURNS turns, then an answer) as a Restate object, on a free port.
//   node --conditions=simple-agent-loop-source restate-worker.ts
import * as restate from "@restatedev/restate-sdk";
import { restateAgent } from "simple-agent-loop/restate";
import { benchModel, benchTools } from "./restate-agent.ts";

const agent = restateAgent({
  name: "bench",
  invokeModel: benchModel,
  tools: benchTools,
  options: { compaction: false },
});
const port = await restate
  .endpoint()
  .setLogger((meta, message, ...rest) => {
    if (String(meta.level) === "error") console.error(message, ...rest);
  })
  .bind(agent)
  .listen(0);
process.stdout.write(`${JSON.stringify({ port })}\n`);
