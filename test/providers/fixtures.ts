import { readFileSync } from "node:fs";

/** A folder of recorded third-party wire traffic under test/fixtures (its SOURCES.md says where each file comes from). */
export type FixtureFolder = "anthropic" | "bedrock" | "google" | "openai-chat" | "openai-responses";

/** The readers of one folder's recordings: a file's text, and a chunks file (one JSON value a line) parsed line by line. */
export type Fixtures = {
  text: (name: string) => string;
  chunks: (name: string) => Record<string, unknown>[];
};

/** The one way a provider test reads its recordings. */
export function recordedFixtures(folder: FixtureFolder): Fixtures {
  const text = (name: string): string =>
    readFileSync(new URL(`../fixtures/${folder}/${name}`, import.meta.url), "utf8");
  const chunks = (name: string): Record<string, unknown>[] =>
    text(name)
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { text, chunks };
}
