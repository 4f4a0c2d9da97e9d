import { readFile } from "node:fs/promises";
import { turnEndFields } from "../model/model-own-fields.ts";
import type { ModelMessage } from "../session.ts";
import { plain, type CassetteAnswer } from "./cassette-entry.ts";
import { readCassette, rebuildError } from "./cassette.ts";
import { scriptedModel, type ScriptedModel, type ScriptedTurn } from "./scripted-model.ts";

/**
 * A recording turned into a `scriptedModel`: one turn per recorded model call, in file order (a
 * streamed answer streams again, a recorded failure is thrown again). Requests are not checked, so
 * a test can edit the prompt, or edit `turns` before it builds the model itself.
 */
export async function scriptedModelFromCassette(path: string): Promise<ScriptedModel> {
  const entries = readCassette(path, await readFile(path, "utf8").catch(() => undefined));
  const turns: ScriptedTurn[] = [];
  for (const entry of entries) if (entry.kind === "model") turns.push(turnOf(entry.answer));
  return scriptedModel(turns);
}

function turnOf(answer: CassetteAnswer): ScriptedTurn {
  if (answer.type === "error") return { error: rebuildError(answer.error) };
  if (answer.type === "messages") return { messages: plain(answer.messages) as ModelMessage[] };
  const messages: ModelMessage[] = [];
  let end: Record<string, unknown> = {};
  for (const { event } of answer.events) {
    if (event.type === "message") messages.push(plain(event.message) as ModelMessage);
    if (event.type === "response-end") end = turnEndFields(event);
  }
  const last = messages.at(-1);
  if (last !== undefined) Object.assign(last, end);
  if (answer.error !== undefined) return { error: rebuildError(answer.error) };
  return { messages, stream: true };
}
