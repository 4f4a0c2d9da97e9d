import type { TestProject } from "vitest/node";
import { findBrowser, type BrowserSource } from "./find-browser.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The browser for the viewer's page tests, or null where none can run. */
    browser: BrowserSource | null;
  }
}

/** Runs once before any test file: finds (and, if packaged, unpacks) the browser once for all of them. */
export default async function setup(project: TestProject): Promise<void> {
  project.provide("browser", (await findBrowser()) ?? null);
}
