import { mkdirSync } from "node:fs";
import * as nodeModule from "node:module";
import { join } from "node:path";
import { cliHome } from "./cli-home.ts";

/**
 * Turns on Node's compile cache for the modules imported after this call, in
 * `<cli home>/compile-cache`: a start after the first reads V8's compiled code instead of
 * compiling the CLI's modules again (`bench/cli-start.ts` measures it). The CLI's home, not the
 * shared temporary directory, so that no other user can put code in it; created private, as
 * the home's other folders. Does nothing where Node has no compile cache (before 22.1), where
 * NODE_DISABLE_COMPILE_CACHE is set (Node itself checks it), or where the folder cannot be
 * made: the CLI then starts as before, only slower.
 */
export function enableCompileCache(environment: NodeJS.ProcessEnv): void {
  // Read through the namespace: Node 20 has no such export, and a named import would fail there.
  const enable = (nodeModule as { enableCompileCache?: (directory: string) => unknown }).enableCompileCache;
  if (enable === undefined) return;
  const directory = join(cliHome(environment), "compile-cache");
  try {
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    enable(directory);
  } catch {
    // A read-only or missing home: no cache.
  }
}
