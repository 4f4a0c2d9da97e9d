export { scriptedModel } from "./scripted-model.ts";
export type { ScriptedModel, ScriptedModelOptions, ScriptedTurn, TurnFunction } from "./scripted-model.ts";
export { cassette, assertCassetteUsed } from "./cassette.ts";
export type { CassetteMode, CassetteModel, CassetteOptions } from "./cassette.ts";
export type {
  CassetteAnswer,
  CassetteEntry,
  CassetteModelEntry,
  CassetteRequest,
  CassetteToolEntry,
  RecordedError,
} from "./cassette-entry.ts";
export {
  CassetteError,
  CassetteMismatchError,
  CassetteSecretError,
  isCassetteError,
  isCassetteMismatchError,
  isCassetteSecretError,
} from "./cassette-errors.ts";
export { scriptedModelFromCassette } from "./scripted-model-from-cassette.ts";
export { useCassette } from "./use-cassette.ts";
export type { CassetteTestContext } from "./use-cassette.ts";
export { cassetteDiff } from "./cassette-diff.ts";
export type { CassetteDifference } from "./cassette-diff.ts";
