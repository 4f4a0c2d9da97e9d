import type { ContentPart } from "../content-parts.ts";
import type { BudgetCharge } from "../model/budget.ts";
import type { JsonValue, Session } from "../session.ts";

/**
 * What a tool step stores in the journal (plain JSON). `content`: the parts of a result with images
 * or files (`toolContent`); a part whose base64 would not fit the step has `chunks` in place of its
 * `data`, journaled after it in that many steps of its own.
 */
export type ToolStep = (
  | { output: JsonValue; content?: StepPart[]; at: number }
  | { error: string; at: number }
  | { timeout: number; at: number }
  | { pause: Session; at: number }
  | { aborted: true; at: number }
  /** A code-mode program's call stopped because its program ended first (`ProgramStop`). */
  | { stopped: true; at: number }
  | { restarted: true; at: number }
) & { spent?: JournaledCharge[] };

/** One charge of the run's budget made inside a tool step, with its USD as priced below the call. */
export type JournaledCharge = BudgetCharge & { usd: number };

/** A content part in a tool step: as it is, or with its base64 moved to `chunks` steps of its own. */
export type StepPart = ContentPart | { chunks: number; part: Omit<ContentPart, "data"> };
