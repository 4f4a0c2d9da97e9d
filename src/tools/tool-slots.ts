/**
 * The concurrency slots of one executor: at most `limit` handlers run at once. A freed slot goes
 * straight to the call that has waited longest, so calls started in call order run in call order.
 */
export type ToolSlots = {
  readonly limit: number;
  active: number;
  readonly waiting: (() => void)[];
};

/** `parallel: false` is one slot; no `maxParallelTools` is no limit (`Infinity`: no bookkeeping at all). */
export function createSlots(options: {
  parallel?: boolean | undefined;
  maxParallelTools?: number | undefined;
}): ToolSlots {
  // A limit that is not a whole number >= 1 (NaN) would never let a call start.
  const limit =
    options.parallel === false ? 1 : Math.max(1, Math.floor(options.maxParallelTools ?? Number.POSITIVE_INFINITY) || 1);
  return { limit, active: 0, waiting: [] };
}

/**
 * Takes a slot: resolves at once when one is free, else once one is handed over. The slot is
 * counted before the promise is returned, so calls that ask in call order get slots in call order.
 */
export function acquireSlot(slots: ToolSlots): Promise<void> {
  if (slots.active < slots.limit) {
    slots.active++;
    return Promise.resolve();
  }
  return new Promise<void>((resolve) => slots.waiting.push(resolve));
}

/** Gives a slot back: to the next waiting call if any (the slot stays taken), else to the pool. */
export function releaseSlot(slots: ToolSlots): void {
  const next = slots.waiting.shift();
  if (next === undefined) slots.active--;
  else next();
}
