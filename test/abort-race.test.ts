import { describe, expect, it } from "vitest";
import { createAbortRace } from "../src/shared/abort.ts";

describe("createAbortRace", () => {
  it("settles like the promise, and rejects the races still in flight when the signal aborts", async () => {
    const controller = new AbortController();
    const race = createAbortRace(controller.signal);
    let finishFirst = (_value: string): void => undefined;
    const first = race.race(new Promise<string>((resolve) => (finishFirst = resolve)));
    const second = race.race(new Promise<string>(() => undefined));
    const third = race.race(Promise.resolve("third"));
    finishFirst("first");
    expect(await first).toBe("first");
    expect(await third).toBe("third");
    controller.abort(new Error("stop"));
    await expect(second).rejects.toThrow("stop");
    await expect(race.race(Promise.resolve("late"))).rejects.toThrow("stop");
    race.dispose();
  });

  it("passes a rejection through", async () => {
    const race = createAbortRace(new AbortController().signal);
    await expect(race.race(Promise.reject(new Error("failed")))).rejects.toThrow("failed");
    race.dispose();
  });
});
