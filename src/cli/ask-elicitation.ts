import type { McpElicitationHandler } from "../mcp/elicitation.ts";
import type { JsonObject, JsonValue } from "../session.ts";
import type { ElicitationAnswer } from "../tools/elicitation.ts";
import type { TerminalAskerOptions } from "./ask-permission.ts";
import { openInBrowser } from "./open-browser.ts";
import { serialQueue } from "./serial-queue.ts";
import { visibleLine, visibleText } from "./visible-text.ts";

/**
 * Answers an MCP server's question (`elicitation/create`) on the terminal, one question at a time.
 * A form is asked field by field after the user chose to answer (`a`), decline (`d`) or cancel
 * (`c`): a yes/no key for a boolean, a numbered choice for an enum, a line otherwise (numbers
 * re-asked until they are numbers; Enter keeps the default or skips an optional field). A URL is
 * shown whole with its host on a line of its own, and opened (with `$BROWSER` or the platform's
 * opener) only after `y`; only http(s) URLs are opened. Every text of the server is made visible.
 * Ctrl-C cancels the question and interrupts the task; Ctrl-D declines.
 */
export function terminalElicitation(options: ElicitationAskerOptions): McpElicitationHandler {
  const queue = serialQueue();
  return (request, { server, signal }) =>
    queue(async () => {
      if (signal.aborted) return cancel;
      options.beforeAsk();
      try {
        return request.mode === "url"
          ? await askUrl(options, { server, message: request.message, url: request.url }, signal)
          : await askForm(options, { server, message: request.message, schema: request.requestedSchema }, signal);
      } finally {
        options.afterAsk();
      }
    });
}

/** What the terminal's elicitation needs: a terminal asker's, the environment ($BROWSER), and where the page a URL opened is removed. */
export type ElicitationAskerOptions = TerminalAskerOptions & {
  env: NodeJS.ProcessEnv;
  /** Takes the function that removes the page file an opened URL left (run it when the CLI ends). */
  onOpened: (remove: () => void) => void;
};

const cancel: ElicitationAnswer = { action: "cancel" };
const decline: ElicitationAnswer = { action: "decline" };

/** A field's answer: its value, none (skipped), or the end of the question. */
type FieldAnswer = { value: JsonValue } | { skip: true } | { stop: ElicitationAnswer };

async function askUrl(
  options: ElicitationAskerOptions,
  question: { server: string; message: string; url: string },
  signal: AbortSignal,
): Promise<ElicitationAnswer> {
  const { out, style, input } = options;
  const parsed = URL.canParse(question.url) ? new URL(question.url) : undefined;
  const web = parsed !== undefined && (parsed.protocol === "https:" || parsed.protocol === "http:");
  // terminal-safe: the server's name, message and URL are made visible; the host (punycode, as URL gives it) too.
  out.write(
    `${style.bold(`● MCP server ${visibleLine(question.server)} asks you to open a page:`)}\n${indent(visibleText(question.message))}\n` +
      `  host: ${style.bold(style.yellow(visibleLine(parsed?.host ?? "(none)")))}\n  ${style.dim(visibleLine(question.url))}\n`,
  );
  if (!web) {
    out.write(style.red("  Not an http(s) address: it is not opened (declined).\n"));
    return decline;
  }
  for (;;) {
    const answer = await input.key(
      `${style.yellow("?")} Open it? ${style.dim("[y] yes · [n] no · [c] cancel (press a key)")} `,
      { signal },
    );
    if (answer.type === "interrupt") return interrupted(options, signal);
    if (answer.type === "end") return decline;
    const key = answer.key.toLowerCase();
    if (key === "y") {
      const remove = openInBrowser(
        parsed.href,
        options.env,
        process.platform,
        undefined,
        "the page an MCP server asks for",
      );
      if (remove !== undefined) options.onOpened(remove);
      return { action: "accept" };
    }
    if (key === "n") return decline;
    if (key === "c") return cancel;
    out.write(style.dim("  Press y, n or c.\n"));
  }
}

async function askForm(
  options: TerminalAskerOptions,
  question: { server: string; message: string; schema: JsonObject },
  signal: AbortSignal,
): Promise<ElicitationAnswer> {
  const { out, style, input } = options;
  const properties = objectOf(question.schema.properties);
  const required = Array.isArray(question.schema.required) ? question.schema.required : [];
  // terminal-safe: the server's name and message are made visible.
  out.write(
    `${style.bold(`● MCP server ${visibleLine(question.server)} asks:`)}\n${indent(visibleText(question.message))}\n`,
  );
  for (;;) {
    const answer = await input.key(
      `${style.yellow("?")} ${style.dim("[a] answer · [d] decline · [c] cancel (press a key)")} `,
      { signal },
    );
    if (answer.type === "interrupt") return interrupted(options, signal);
    if (answer.type === "end") return decline;
    const key = answer.key.toLowerCase();
    if (key === "d") return decline;
    if (key === "c") return cancel;
    if (key === "a") break;
    out.write(style.dim("  Press a, d or c.\n"));
  }
  const content: JsonObject = {};
  for (const [name, field] of Object.entries(properties)) {
    const given = await askField(options, { name, field: objectOf(field), required: required.includes(name) }, signal);
    if ("stop" in given) return given.stop;
    if ("value" in given) content[name] = given.value;
  }
  return { action: "accept", content };
}

async function askField(
  options: TerminalAskerOptions,
  field: { name: string; field: JsonObject; required: boolean },
  signal: AbortSignal,
): Promise<FieldAnswer> {
  const { out, style, input } = options;
  const { field: schema, required } = field;
  const label = visibleLine(typeof schema.title === "string" ? schema.title : field.name);
  const fallback = schema.default;
  const hint = [
    ...(typeof schema.description === "string" ? [visibleLine(schema.description)] : []),
    ...(required ? [] : ["optional"]),
    ...(fallback === undefined ? [] : [`default ${visibleLine(JSON.stringify(fallback))}`]),
  ].join(" · ");
  // terminal-safe: the field's title and description (the server's) are made visible.
  out.write(`  ${style.bold(label)}${hint === "" ? "" : ` ${style.dim(`(${hint})`)}`}\n`);
  const choices = choicesOf(schema);
  if (schema.type === "boolean") return askBoolean(options, { required, fallback }, signal);
  for (;;) {
    if (choices.length > 0)
      // terminal-safe: the choices' values and titles are made visible.
      out.write(
        choices
          .map((choice, index) => `    ${index + 1}) ${visibleLine(choice.title)}`)
          .join("\n")
          .concat("\n"),
      );
    const line = await input.question(`  ${style.yellow(">")} `, { signal });
    if (line.type === "interrupt") return { stop: await interrupted(options, signal) };
    if (line.type === "end") return { stop: decline };
    const text = line.text.trim();
    if (text === "") {
      if (fallback !== undefined) return { value: fallback };
      if (!required) return { skip: true };
      out.write(style.dim("  This one is needed.\n"));
      continue;
    }
    const value = parseValue(text, schema.type, choices);
    if (value !== undefined) return { value };
    out.write(
      style.dim(
        choices.length > 0
          ? `  Type a number from 1 to ${choices.length}.\n`
          : `  Type ${schema.type === "integer" ? "a whole number" : "a number"}.\n`,
      ),
    );
  }
}

async function askBoolean(
  options: TerminalAskerOptions,
  field: { required: boolean; fallback: JsonValue | undefined },
  signal: AbortSignal,
): Promise<FieldAnswer> {
  const { out, style, input } = options;
  for (;;) {
    const answer = await input.key(`  ${style.yellow(">")} ${style.dim("[y] yes · [n] no")} `, { signal });
    if (answer.type === "interrupt") return { stop: await interrupted(options, signal) };
    if (answer.type === "end") return { stop: decline };
    const key = answer.key.toLowerCase();
    if (key === "y") return { value: true };
    if (key === "n") return { value: false };
    if ((key === "\r" || key === "\n") && field.fallback !== undefined) return { value: field.fallback };
    if ((key === "\r" || key === "\n") && !field.required) return { skip: true };
    out.write(style.dim("  Press y or n.\n"));
  }
}

/** A field's choices: `enum` (with `enumNames`), or `oneOf`/`anyOf` of `{ const, title }`. */
function choicesOf(schema: JsonObject): { value: JsonValue; title: string }[] {
  const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
  if (Array.isArray(schema.enum))
    return schema.enum.map((value, index) => ({
      value,
      title: typeof names[index] === "string" ? `${names[index]} (${shown(value)})` : shown(value),
    }));
  const items = objectOf(schema.items);
  const options = [schema.oneOf, schema.anyOf, items.oneOf, items.anyOf].find(Array.isArray) ?? [];
  return options
    .map(objectOf)
    .filter((option) => "const" in option)
    .map((option) => ({
      value: option.const!,
      title: typeof option.title === "string" ? `${option.title} (${shown(option.const!)})` : shown(option.const!),
    }));
}

// A choice's value as the user reads it: a string as it is, anything else as JSON.
function shown(value: JsonValue): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function parseValue(text: string, type: JsonValue | undefined, choices: { value: JsonValue }[]): JsonValue | undefined {
  if (choices.length > 0) {
    const index = /^\d{1,4}$/.test(text) ? Number(text) - 1 : -1;
    return choices[index]?.value;
  }
  if (type === "number" || type === "integer") {
    const value = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isFinite(value) || (type === "integer" && !Number.isInteger(value))) return undefined;
    return value;
  }
  return text;
}

// Ctrl-C at the question: the question is cancelled and the task interrupted, as at a permission prompt.
function interrupted(options: TerminalAskerOptions, signal: AbortSignal): Promise<ElicitationAnswer> {
  if (!signal.aborted) options.onInterrupt();
  return Promise.resolve(cancel);
}

function objectOf(value: JsonValue | undefined): JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n");
}
