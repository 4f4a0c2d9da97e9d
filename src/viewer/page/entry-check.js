// @ts-check
/**
 * `/assets/entry-check.js`: what the session format says each field of a log entry holds, and
 * what is wrong with an entry read from a log (untrusted JSON: any field may hold any value).
 * Names read from the log never key a plain object here: the tables are Maps.
 */
import { timeOf } from "./dom.js";

/** @typedef {{ [key: string]: unknown }} JsonObject */

/**
 * What is wrong with a message, as a problem to list (undefined: nothing): the fields whose
 * values are not of the kind the session format gives them. The message is still drawn, each such
 * value shown as text.
 * @param {JsonObject} message
 * @returns {string | undefined}
 */
export function messageProblem(message) {
  const kind = typeof message.role === "string" ? message.role : typeof message.type === "string" ? message.type : "";
  const wrong = wrongFields(message, messageFields.get(kind) ?? messageFields.get("") ?? []);
  return wrong.length > 0
    ? article(kind) + " " + kind + " message whose " + wrong.join("; ") + " (shown as it is)"
    : undefined;
}

/**
 * What is wrong with an entry that is not a message (a splice, replace, update or custom entry), as `messageProblem` says it.
 * @param {JsonObject} entry
 * @returns {string | undefined}
 */
export function entryProblem(entry) {
  const type = typeof entry.type === "string" ? entry.type : "";
  const rules = entryFields.get(type);
  const wrong = rules === undefined ? [] : wrongFields(entry, rules);
  return wrong.length > 0
    ? article(type) + ' "' + type + '" entry whose ' + wrong.join("; ") + " (shown as it is)"
    : undefined;
}

/**
 * The kind of value a field has in the session format ("?": it may be absent), as `[path, kind]`
 * with a path of keys ("usage.*": every key of usage). Maps: a kind read from the log never reaches
 * a prototype. Compiled once: they are checked for every entry of logs of hundreds of megabytes.
 * `parts`: text, or an array of content parts (drawn part by part, each checked as it is drawn).
 * @typedef {"text" | "time" | "count" | "boolean" | "object" | "parts" | "text?" | "time?" | "count?" | "boolean?" | "object?" | "parts?"} FieldKind
 * @typedef {{ parents: string[], prefix: string, key: string, kind: string, optional: boolean }} FieldRule
 */
const messageFields = compileFields(
  new Map([
    ["user", [["content", "parts"]]],
    ["system", [["content", "text"]]],
    [
      "assistant",
      [
        ["content", "text"],
        ["usage", "object?"],
        ["usage.*", "count?"],
        ["stopReason", "text?"],
      ],
    ],
    [
      "thinking",
      [
        ["content", "text"],
        ["redacted", "boolean?"],
      ],
    ],
    [
      "tool_call",
      [
        ["id", "text"],
        ["name", "text"],
        ["input", "object"],
        ["approval", "object?"],
        ["approval.status", "text"],
        ["approval.reason", "text?"],
      ],
    ],
    [
      "tool_result",
      [
        ["id", "text"],
        ["isError", "boolean?"],
        ["waitMs", "count?"],
        ["content", "parts?"],
      ],
    ],
    // A message of a kind this page does not know: only its time.
    ["", []],
  ]),
  [["ts", "time?"]],
);

const entryFields = compileFields(
  new Map([
    [
      "splice",
      [
        ["reason", "text?"],
        ["details", "object?"],
        ["details.summary", "text?"],
        ["details.strategy", "text?"],
        ["details.tokensBefore", "count?"],
        ["details.tokensAfter", "count?"],
      ],
    ],
    ["replace", [["reason", "text?"]]],
    ["update", [["reason", "text?"]]],
    ["custom", []],
  ]),
  [["ts", "time?"]],
);

/**
 * @param {ReadonlyMap<string, ReadonlyArray<readonly [path: string, kind: FieldKind]>>} fieldsByKind
 * @param {ReadonlyArray<readonly [path: string, kind: FieldKind]>} common fields of every kind
 * @returns {ReadonlyMap<string, readonly FieldRule[]>}
 */
function compileFields(fieldsByKind, common) {
  return new Map(
    [...fieldsByKind].map(([kind, fields]) => [
      kind,
      [...fields, ...common].map(([path, expected]) => {
        const parents = path.split(".");
        const key = parents.pop() ?? "";
        const optional = expected.endsWith("?");
        return {
          parents,
          prefix: parents.length > 0 ? parents.join(".") + "." : "",
          key,
          kind: optional ? expected.slice(0, -1) : expected,
          optional,
        };
      }),
    ]),
  );
}

/**
 * What is wrong with the fields of value, as "path is …, not …".
 * @param {JsonObject} value
 * @param {readonly FieldRule[]} rules
 * @returns {string[]}
 */
function wrongFields(value, rules) {
  /** @type {string[]} */
  const wrong = [];
  for (const rule of rules) {
    /** @type {JsonObject | undefined} */
    let parent = value;
    for (const key of rule.parents) {
      /** @type {unknown} */
      const next = Object.hasOwn(parent, key) ? parent[key] : undefined;
      // A parent missing, or of another kind, is reported for itself (its own rule).
      parent = isObject(next) ? next : undefined;
      if (parent === undefined) break;
    }
    if (parent === undefined) continue;
    if (rule.key === "*") {
      for (const key of Object.keys(parent)) checkField(parent[key], rule, key, wrong);
    } else {
      checkField(Object.hasOwn(parent, rule.key) ? parent[rule.key] : undefined, rule, rule.key, wrong);
    }
  }
  return wrong;
}

/**
 * @param {unknown} field
 * @param {FieldRule} rule
 * @param {string} key
 * @param {string[]} wrong
 */
function checkField(field, rule, key, wrong) {
  if (field === undefined && rule.optional) return;
  if (!isKind(field, rule.kind))
    wrong.push(rule.prefix + key + " is " + describe(field) + ", not " + kindName(rule.kind));
}

/** @param {string} kind */
function kindName(kind) {
  return kind === "text"
    ? "text"
    : kind === "parts"
      ? "text or a list of content parts"
      : kind === "time"
        ? "a time (ISO 8601)"
        : kind === "count"
          ? "a count (a number, not negative)"
          : article(kind) + " " + kind;
}

/** @param {string} word */
function article(word) {
  return /^[aeiou]/i.test(word) ? "an" : "a";
}

/**
 * @param {unknown} value
 * @param {string} kind
 */
function isKind(value, kind) {
  if (kind === "text") return typeof value === "string";
  if (kind === "parts") return typeof value === "string" || Array.isArray(value);
  if (kind === "time") return timeOf(value) !== undefined;
  if (kind === "count") return isCount(value);
  if (kind === "boolean") return typeof value === "boolean";
  return isObject(value);
}

/**
 * @param {unknown} value
 * @returns {value is JsonObject}
 */
export function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A finite number, not negative: a count of tokens, a duration.
 * @param {unknown} value
 * @returns {value is number}
 */
export function isCount(value) {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

/**
 * A value named in a problem: its JSON, cut short, or its type.
 * @param {unknown} value
 * @returns {string}
 */
export function describe(value) {
  if (value === undefined) return "missing";
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? value.slice(0, 40) + "…" : value);
  return typeof value === "number" || typeof value === "boolean" ? String(value) : typeof value;
}
