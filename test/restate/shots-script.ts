// An agent whose tool returns a screenshot larger than a step (journaled in chunk steps), for the
// Restate tests in worker processes and in process: the model records a digest of the image it was
// shown (`seen <tag> <sha256>`) and can be held before it answers (`model-<tag>-1`), as agent-script.ts.
import { createHash } from "node:crypto";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { imagePart, tool, toolContent, type InvokeModel, type ModelMessage, type Tool } from "simple-agent-loop";
import { holdAt } from "./agent-script.ts";

/** The step limit of the `shots` agent: the screenshot's base64 needs four chunk steps. */
export const shotsMaxStepBytes = 512 * 1024;

/** 1.5 MB of bytes no compression would shrink much; the same in every process. */
export const screenshotBytes = Uint8Array.from({ length: 1536 * 1024 }, (_, index) => (index * 7919 + 13) % 251);

export const screenshotDigest = createHash("sha256").update(screenshotBytes).digest("hex");

/** Turn 0 calls `shoot`; turn 1 records what image it was shown and answers. */
export function shotsModel(dir: string): InvokeModel {
  return async (_tools, session, context) => {
    const first = session.messages.find((message) => "role" in message && message.role === "user");
    const tag = first !== undefined && "content" in first && typeof first.content === "string" ? first.content : "";
    const result = session.messages.find((message) => "type" in message && message.type === "tool_result");
    const turn = result === undefined ? 0 : 1;
    appendFileSync(join(dir, "effects"), `model ${tag} ${turn}\n`);
    if (result !== undefined) {
      // What the model is shown, recorded before a hold: the killed call's view counts too.
      const image = "content" in result ? result.content?.find((part) => part.type === "image") : undefined;
      const shown =
        image !== undefined && "data" in image
          ? createHash("sha256").update(Buffer.from(image.data, "base64")).digest("hex")
          : "no image";
      appendFileSync(join(dir, "effects"), `seen ${tag} ${shown}\n`);
    }
    await holdAt(dir, `model-${tag}-${turn}`, context.signal);
    if (result === undefined) return [{ type: "tool_call", id: `${tag}-s1`, name: "shoot", input: {} }];
    const answer: ModelMessage = { role: "assistant", content: `Saw ${tag}.`, stopReason: "end_turn" };
    return [answer];
  };
}

/** `shoot`: records `tool <call id>` once its work is done, returns a text and the screenshot. */
export function shotsTools(dir: string): Tool[] {
  return [
    tool({
      name: "shoot",
      description: "Screenshots the page.",
      inputSchema: { type: "object", properties: {} },
      handler: async (_input, { id, signal }) => {
        await holdAt(dir, `tool-${id}`, signal);
        appendFileSync(join(dir, "effects"), `tool ${id}\n`);
        return toolContent([{ type: "text", text: "screenshot of /" }, imagePart(screenshotBytes, "image/png")]);
      },
    }),
  ];
}
