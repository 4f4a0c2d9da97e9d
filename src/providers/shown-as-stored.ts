import type { ModelStreamEvent } from "../model/model-stream-event.ts";

/**
 * A provider's stream events with what a listener is shown made to add up to what is stored: the
 * text and thinking deltas since the last message of that kind must be the start of the next such
 * message's content, and whatever of it they did not show (a server that sends a block whole, or
 * ends it with text its deltas left out) is shown as one more delta just before the message.
 * Every adapter's stream goes through it; an adapter must still never show text twice (that cannot
 * be taken back), which the recorded-traffic property test checks.
 */
export async function* shownAsStored(
  events: AsyncIterable<ModelStreamEvent>,
  asked?: string,
): AsyncGenerator<ModelStreamEvent> {
  let text = "";
  let thinking = "";
  for await (const event of events) {
    if (event.type === "text-delta") text += event.delta;
    else if (event.type === "thinking-delta") thinking += event.delta;
    else if (event.type === "message") {
      const message = event.message;
      if ("role" in message) {
        const rest = unshown(text, message.content);
        if (rest !== "") yield { type: "text-delta", delta: rest };
        text = "";
      } else if (message.type === "thinking") {
        const rest = unshown(thinking, message.content);
        if (rest !== "") yield { type: "thinking-delta", delta: rest };
        thinking = "";
      }
    } else if (event.type === "response-end" && event.model === undefined && asked !== undefined) {
      // The response named no model: the one asked for answered (see `answeredBy`).
      yield { ...event, model: asked };
      continue;
    }
    yield event;
  }
}

// The part of `stored` the listener has not seen, when what it saw is its start.
function unshown(shown: string, stored: unknown): string {
  if (typeof stored !== "string" || !stored.startsWith(shown)) return "";
  return stored.slice(shown.length);
}
