// The CLI's executable as one ES module (plus a few chunks it imports only when needed): part of
// `npm run build`, after tsc, from tsc's output. Node resolves, reads and links every module of an
// import graph at start, about a millisecond each here; the ~200 modules a start imports made
// that most of the start (bench/cli-start.ts: ~280 ms of CPU before, ~100 ms after, Node itself
// ~45). The bin is dist/cli/bin.js, beside main.js, so that what it finds relative to its own file
// (the package's package.json, the viewer's modules) is where it was. Kept out, imported as
// before: the optional peers (the MCP SDK and the rest) and the session viewer, which reads its
// page from the files beside its module.
import { chmodSync } from "node:fs";
import { build } from "rolldown";

const peers = ["@modelcontextprotocol/sdk", "@opentelemetry/", "@restatedev/", "pg", "vitest"];

await build({
  input: "dist/cli/main.js",
  platform: "node",
  external: (id) =>
    peers.some((peer) => id === peer || id.startsWith(peer.endsWith("/") ? peer : `${peer}/`)) ||
    /[\\/]viewer[\\/]index\.js$/.test(id),
  output: {
    dir: "dist/cli",
    format: "esm",
    entryFileNames: "bin.js",
    chunkFileNames: "bin-[name]-[hash].js",
    sourcemap: true,
  },
});
// rolldown writes files with the default mode (0644): the bin must be executable, or
// `npx simple-agent-loop` in this checkout and in every app linked to it fails with "Permission
// denied" (an install from the registry or a tarball sets the mode itself; a link does not).
chmodSync("dist/cli/bin.js", 0o755);
