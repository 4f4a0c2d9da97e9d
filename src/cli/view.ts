import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { ViewArgs } from "./args.ts";
import { CliError } from "./cli-error.ts";
import { openInBrowser } from "./open-browser.ts";
import { cliStore, isSessionId, sessionsDirectory } from "./sessions.ts";
import { isStoreLocation, storeSessionFile, type StoreSessionFile } from "./store-session-file.ts";
import { visibleLine } from "./visible-text.ts";

/**
 * `simple-agent-loop view [path]`: serves the session viewer for a session file, a directory of
 * them, a session id of the CLI's store (default: the store's directory), or a session of a
 * database store (`postgres://…/<database>/<id>`, `sqlite:<file>/<id>`: followed live through a
 * private copy), prints its URL (with
 * the viewer's token), opens it in the browser when run on a terminal of a desktop, and serves
 * until Ctrl-C (or SIGTERM), then exits with 0.
 */
export async function runView(
  args: ViewArgs,
  io: { cwd: string; env: NodeJS.ProcessEnv; stdout: NodeJS.WritableStream & { isTTY?: boolean } },
): Promise<number> {
  const mirror: StoreSessionFile | undefined =
    args.path !== undefined && isStoreLocation(args.path) ? await storeSessionFile(args.path, io.cwd) : undefined;
  try {
    return await serve(mirror?.path, args, io);
  } finally {
    await mirror?.close();
  }
}

async function serve(
  mirrored: string | undefined,
  args: ViewArgs,
  io: { cwd: string; env: NodeJS.ProcessEnv; stdout: NodeJS.WritableStream & { isTTY?: boolean } },
): Promise<number> {
  const store = cliStore(io.env);
  let path = mirrored ?? (args.path === undefined ? sessionsDirectory(io.env) : resolve(io.cwd, args.path));
  if (!existsSync(path) && args.path !== undefined && isSessionId(args.path)) path = store.path(args.path);
  if (!existsSync(path))
    throw new CliError(args.path === undefined ? `no sessions yet in ${path}` : `${path} does not exist`);
  // Loaded only for this command: the agent itself never needs the viewer.
  const { serveViewer } = await import("../viewer/index.ts");
  // The dated list prices (simple-agent-loop/prices): each call's cost where its model is listed.
  const { modelPrices } = await import("../prices/index.ts");
  const viewer = await serveViewer(path, {
    prices: modelPrices,
    ...(args.port === undefined ? {} : { port: args.port }),
    ...(args.host === undefined ? {} : { host: args.host }),
  });
  const shown = mirrored === undefined ? path : args.path!.replace(/\/\/[^@/]*@/, "//…@");
  io.stdout.write(`Session viewer for ${visibleLine(shown)}\n${visibleLine(viewer.url)}\nPress Ctrl-C to stop.\n`);
  const removeOpener = io.stdout.isTTY === true ? openInBrowser(viewer.url, io.env) : undefined;
  await new Promise<void>((stop) => {
    process.once("SIGINT", () => stop());
    process.once("SIGTERM", () => stop());
  });
  removeOpener?.();
  await viewer.close();
  return 0;
}
