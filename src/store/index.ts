export { openSession, loadSession, loadEntries } from "./session-file.ts";
export type { OpenSessionOptions, LoadSessionOptions } from "./session-file.ts";
export { closeSession, appendEntry, bindSession } from "./binding.ts";
export type { EntrySink } from "./binding.ts";
export { fileStore } from "./file-store.ts";
export type { FileStore } from "./file-store.ts";
export type { SessionStore } from "./session-store.ts";
export type { SyncMode } from "./log-writer.ts";
export type {
  SessionEntry,
  MessageEntry,
  ReplaceEntry,
  UpdateEntry,
  SpliceEntry,
  KeptEntry,
  CustomEntry,
  LogEntry,
} from "./entries.ts";
export { StoreError, isStoreError } from "./store-error.ts";
export type { StoreErrorCode } from "./store-error.ts";
