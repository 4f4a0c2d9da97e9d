export { otelObserver } from "./observer.ts";
export type { OtelApi, OtelObserver, OtelObserverOptions } from "./observer.ts";
