// "Hello World": no tools, one turn; the model just responds.
//   node_modules/.bin/node --conditions=simple-agent-loop-source examples/hello-world.ts
import { agentLoop, initSession, response, type InvokeModel, type Session } from "simple-agent-loop";
import { isMain, requireModel } from "./run-example.ts";

export async function helloWorld(invokeModel: InvokeModel): Promise<{ answer: string; session: Session }> {
  const session = initSession("You are a helpful assistant.", "Say hello in three languages.");
  await agentLoop(invokeModel, [], session, { name: "hello", maxIterations: 1 });
  return { answer: response(session)?.content ?? "", session };
}

if (isMain(import.meta.url)) {
  const { invokeModel } = requireModel();
  const { answer } = await helloWorld(invokeModel);
  console.log(answer);
}
