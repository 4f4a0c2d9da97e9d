export { openSession, loadSession, loadEntries } from "./session-file.ts";
export type { OpenSessionOptions, LoadSessionOptions } from "./session-file.ts";
export { closeSession, appendEntry, bindSession, flushSession } from "./binding.ts";
export type { EntrySink } from "./binding.ts";
export { fileStore } from "./file-store.ts";
export type { FileStore } from "./file-store.ts";
export { sqliteStore } from "./sqlite-store.ts";
export type { SqliteStore, SqliteStoreOptions } from "./sqlite-store.ts";
export { postgresStore } from "./postgres-store.ts";
export type { PostgresStore, PostgresStoreOptions, PostgresPool, PostgresClient } from "./postgres-store.ts";
export type { LeaseOptions } from "./sql-tables.ts";
export type { SessionStore } from "./session-store.ts";
export type { SessionSummary, SessionStatus, ListOptions } from "./session-summary.ts";
export type { SyncMode } from "./log-writer.ts";
export type {
  SessionEntry,
  MessageEntry,
  ReplaceEntry,
  UpdateEntry,
  SpliceEntry,
  KeptEntry,
  GuardrailEntry,
  CustomEntry,
  LogEntry,
} from "./entries.ts";
export { StoreError, isStoreError, SessionLockedError, isSessionLockedError } from "./store-error.ts";
export type { StoreErrorCode } from "./store-error.ts";
