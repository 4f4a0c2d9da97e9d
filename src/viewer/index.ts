export { serveViewer } from "./serve-viewer.ts";
export type { Viewer, ViewerOptions } from "./serve-viewer.ts";
export type { SessionsResponse } from "./request-handler.ts";
export type { SessionSummary } from "./session-list.ts";
export type { LogUpdate, LogRecord, LogProblem } from "./log-reader.ts";
