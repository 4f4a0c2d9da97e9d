import { markRaisedBeforeSending } from "../errors.ts";
import type { ModelStreamEvent } from "../model/model-stream-event.ts";
import type { InvokeModel } from "../model/invoke-model.ts";
import type { ModelMessage, Session, ToolCallMessage } from "../session.ts";

type ModelResult = ReturnType<InvokeModel>;

/**
 * Keeps tool-call ids unique within the session when a provider reuses one an earlier turn already
 * has (OpenAI-compatible servers number calls per response: `call_0` in every turn; another
 * provider would then reject the session). The call gets a fresh session id (`<id>_2`, `_3`…) and
 * keeps the provider's own in `wireId`, with `provider` set, so that adapter can send it back; its
 * deltas and its message say the same id. A response that reuses nothing is returned as it is.
 */
export function uniqueToolIdsInSession(result: ModelResult, session: Session, provider: string): ModelResult {
  const taken = new Set<string>();
  for (const message of session.messages) if ("type" in message && message.type === "tool_call") taken.add(message.id);
  if (taken.size === 0) return result;
  const renamed = new Map<string, string>();
  const rename = (id: string): string => {
    const known = renamed.get(id);
    if (known !== undefined) return known;
    if (!taken.has(id)) {
      taken.add(id);
      renamed.set(id, id);
      return id;
    }
    let suffix = 2;
    while (taken.has(`${id}_${suffix}`)) suffix++;
    const fresh = `${id}_${suffix}`;
    taken.add(fresh);
    renamed.set(id, fresh);
    return fresh;
  };
  const message = (model: ModelMessage): ModelMessage => {
    if (!("type" in model) || model.type !== "tool_call") return model;
    const id = rename(model.id);
    if (id === model.id) return model;
    const call: ToolCallMessage = { ...model, id, provider: model.provider ?? provider };
    // An id the adapter made up was never the provider's: there is nothing to send back.
    if (model.generatedId !== true) call.wireId = model.wireId ?? model.id;
    return call;
  };
  const event = (streamed: ModelStreamEvent): ModelStreamEvent => {
    if (streamed.type === "message") return { ...streamed, message: message(streamed.message) };
    if (streamed.type === "tool-call-start" || streamed.type === "tool-call-delta")
      return { ...streamed, id: rename(streamed.id) };
    return streamed;
  };
  if (Array.isArray(result)) return result.map(message);
  if (result instanceof Promise) return result.then((messages) => messages.map(message));
  return mapStream(result, event);
}

// Forwards next/return/throw to the adapter's own iterator, so an abort closes its connection at once.
function mapStream(
  stream: AsyncIterable<ModelStreamEvent>,
  map: (event: ModelStreamEvent) => ModelStreamEvent,
): AsyncIterable<ModelStreamEvent> {
  return {
    [Symbol.asyncIterator]: () => {
      const inner = stream[Symbol.asyncIterator]();
      const mapped = (step: IteratorResult<ModelStreamEvent>): IteratorResult<ModelStreamEvent> =>
        step.done === true ? step : { done: false, value: map(step.value) };
      const iterator: AsyncIterator<ModelStreamEvent> = { next: async () => mapped(await inner.next()) };
      if (inner.return !== undefined) iterator.return = async (value?: unknown) => inner.return!(value);
      if (inner.throw !== undefined) iterator.throw = async (error?: unknown) => mapped(await inner.throw!(error));
      return iterator;
    },
  };
}

/** An adapter's `invokeModel` whose results keep tool-call ids unique in the session (see `uniqueToolIdsInSession`). */
export function withUniqueToolIds<T extends InvokeModel & { structuredOutput?: "native" }>(
  invoke: T,
  provider: string,
): T {
  const wrapped = ((tools, session, context) => {
    let answer: ReturnType<InvokeModel>;
    try {
      answer = invoke(tools, session, context);
    } catch (error) {
      // The adapter's call sends its request only once its answer is read: what it throws here
      // (no key, an invalid setting, a request it cannot build) came before anything was sent.
      throw markRaisedBeforeSending(error);
    }
    return uniqueToolIdsInSession(answer, session, provider);
  }) as T;
  if (invoke.structuredOutput !== undefined) wrapped.structuredOutput = invoke.structuredOutput;
  return wrapped;
}
