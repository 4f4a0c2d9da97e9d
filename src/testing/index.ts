export { scriptedModel } from "./scripted-model.ts";
export type { ScriptedModel, ScriptedModelOptions, ScriptedTurn, TurnFunction } from "./scripted-model.ts";
