export { serveViewer } from "./serve-viewer.ts";
export type { Viewer, ViewerOptions } from "./serve-viewer.ts";
export type { SessionsResponse, TargetResponse } from "./request-handler.ts";
export type { LogEventHead } from "./log-events.ts";
export type { SessionOutcome, SessionSummary } from "./session-list.ts";
export type { LogUpdate, LogRecord, LogProblem } from "./log-reader.ts";
