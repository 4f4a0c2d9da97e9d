import { readdirSync, readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { parse as parseYaml } from "yaml";
import type { FixtureFolder } from "./fixtures.ts";
import { eventFrames } from "./event-stream-frames.ts";

/** One successful model answer found in a recording: its body as the server sent it. */
export type RecordedAnswer = {
  /** The file and, where it holds several, which answer (`file#2`). */
  name: string;
  folder: FixtureFolder;
  streamed: boolean;
  /** The body: SSE text, AWS event-stream bytes, or a JSON body. */
  body: string | Uint8Array;
};

export const fixtureFolders: readonly FixtureFolder[] = [
  "anthropic",
  "bedrock",
  "google",
  "openai-chat",
  "openai-responses",
];

/**
 * Every successful answer of every recording in a folder of test/fixtures, whatever the file's
 * form (VCR cassettes, the AI SDK's chunks files, raw SSE, JSON bodies, the Anthropic SDK's
 * request/response pairs). Error answers (a status other than 200, an `error` body) are left out:
 * they hold no turn.
 */
export function recordedAnswers(folder: FixtureFolder): RecordedAnswer[] {
  const directory = new URL(`../fixtures/${folder}/`, import.meta.url);
  const answers: RecordedAnswer[] = [];
  for (const file of readdirSync(directory).sort()) {
    if (file === "SOURCES.md") continue;
    const text = readFileSync(new URL(file, directory), "utf8");
    const found = answersIn(folder, file, text);
    found.forEach((answer, index) =>
      answers.push({ ...answer, folder, name: found.length > 1 ? `${file}#${index + 1}` : file }),
    );
  }
  return answers;
}

type Found = Omit<RecordedAnswer, "name" | "folder">;

function answersIn(folder: FixtureFolder, file: string, text: string): Found[] {
  if (file.endsWith(".chunks.txt")) return chunkAnswers(folder, text);
  if (file.endsWith(".yaml")) return cassetteAnswers(folder, file, text);
  if (file.endsWith(".txt")) return [{ streamed: true, body: text }];
  const parsed = JSON.parse(text) as unknown;
  if (Array.isArray(parsed)) return pairAnswers(parsed as SdkPair[]);
  return isError(parsed) ? [] : [{ streamed: false, body: text }];
}

// One JSON event a line; a file may hold several answers one after another (split where one begins).
function chunkAnswers(folder: FixtureFolder, text: string): Found[] {
  const events = text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const answers: Record<string, unknown>[][] = [];
  for (const event of events) {
    const starts = folder === "openai-responses" && event.type === "response.created";
    if (answers.length === 0 || (starts && answers.at(-1)!.length > 0)) answers.push([]);
    answers.at(-1)!.push(event);
  }
  return answers
    .filter((answer) => !answer.some((event) => event.type === "error" || event.type === "response.failed"))
    .map((answer) =>
      folder === "bedrock"
        ? { streamed: true, body: concat(eventFrames(answer)) }
        : { streamed: true, body: answer.map((event) => `data: ${JSON.stringify(event)}\n\n`).join("") },
    );
}

type CassetteResponse = {
  status?: { code?: number };
  headers?: Record<string, string[]>;
  body?: { string?: string | Uint8Array } | string;
  parsed_body?: unknown;
};

function cassetteAnswers(folder: FixtureFolder, file: string, text: string): Found[] {
  const cassette = parseYaml(text) as { interactions: { response: CassetteResponse }[] };
  const found: Found[] = [];
  for (const { response } of cassette.interactions) {
    if ((response.status?.code ?? 200) !== 200) continue;
    const raw = typeof response.body === "string" ? response.body : response.body?.string;
    if (raw === undefined || raw === "") {
      if (response.parsed_body !== undefined && !isError(response.parsed_body))
        found.push({ streamed: false, body: JSON.stringify(response.parsed_body) });
      continue;
    }
    const type = header(response, "content-type");
    if (typeof raw !== "string") {
      if (header(response, "content-encoding") === "gzip") {
        const text = gunzipSync(raw).toString("utf8");
        found.push({ streamed: type.includes("event-stream"), body: text });
      } else found.push({ streamed: true, body: raw });
      continue;
    }
    const streamed = type.includes("event-stream") || /^(event|data):/.test(raw.trimStart());
    if (!streamed && isError(JSON.parse(raw))) continue;
    if (folder === "bedrock" && streamed) throw new Error(`${file}: a Bedrock stream recorded as text`);
    found.push({ streamed, body: raw });
  }
  return found;
}

function header(response: CassetteResponse, name: string): string {
  for (const [key, values] of Object.entries(response.headers ?? {}))
    if (key.toLowerCase() === name) return values[0] ?? "";
  return "";
}

type SdkPair = { response: { status_code?: number; headers?: Record<string, string>; body?: unknown } };

function pairAnswers(pairs: readonly SdkPair[]): Found[] {
  return pairs.flatMap(({ response }) => {
    if ((response.status_code ?? 200) !== 200) return [];
    const body = typeof response.body === "string" ? response.body : JSON.stringify(response.body);
    const streamed = (response.headers?.["content-type"] ?? "").includes("event-stream");
    return [{ streamed, body }];
  });
}

function isError(body: unknown): boolean {
  return typeof body === "object" && body !== null && "error" in body && !("candidates" in body);
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}
