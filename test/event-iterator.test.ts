import { describe, expect, it } from "vitest";
import { runStream } from "../src/loop/event-iterator.ts";

// A run that emits 1, 2, 3 and records, at each, whether anyone listened.
function countingRun(heard: boolean[]) {
  return async (emit: (event: number) => void, listening: () => boolean): Promise<string> => {
    for (const event of [1, 2, 3]) {
      heard.push(listening());
      emit(event);
      await Promise.resolve();
    }
    return "done";
  };
}

describe("runStream", () => {
  it("says nobody listens when only the result is awaited", async () => {
    const heard: boolean[] = [];
    const stream = runStream(countingRun(heard), () => undefined);
    expect(await stream.result).toBe("done");
    expect(heard).toStrictEqual([false, false, false]);
  });

  it("says a listener listens, and hands it every event", async () => {
    const heard: boolean[] = [];
    const events: number[] = [];
    const stream = runStream(
      countingRun(heard),
      () => undefined,
      (event) => events.push(event),
    );
    await stream.result;
    expect(heard).toStrictEqual([true, true, true]);
    expect(events).toStrictEqual([1, 2, 3]);
  });

  it("says an iterating consumer listens until it stops", async () => {
    const heard: boolean[] = [];
    let resume = (): void => undefined;
    const stopped = new Promise<void>((resolve) => (resume = resolve));
    const stream = runStream<number, string>(
      async (emit, listening) => {
        heard.push(listening());
        emit(1);
        await stopped;
        heard.push(listening());
        return "done";
      },
      () => resume(),
    );
    for await (const event of stream) {
      expect(event).toBe(1);
      break;
    }
    expect(heard).toStrictEqual([true, false]);
  });

  it("rejects the next() after the last event with the run's error", async () => {
    const stream = runStream<number, never>(
      async (emit) => {
        emit(1);
        throw new Error("boom");
      },
      () => undefined,
    );
    const events: number[] = [];
    await expect(
      (async () => {
        for await (const event of stream) events.push(event);
      })(),
    ).rejects.toThrow("boom");
    expect(events).toStrictEqual([1]);
  });
});
