import { errorMessage } from "../errors.ts";
import type { SqlDialect } from "./sql-tables.ts";
import { StoreError } from "./store-error.ts";

/** The part of a `pg` Pool the store uses (a `pg.Pool`, or anything with its `connect`, `query` and `end`). */
export type PostgresPool = {
  connect: () => Promise<PostgresClient>;
  query: (text: string, values?: unknown[]) => Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
  end: () => Promise<void>;
};

/** A pooled connection: `query` and `release`. */
export type PostgresClient = {
  query: (text: string, values?: unknown[]) => Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
  release: (error?: Error | boolean) => void;
};

export const postgresDialect: SqlDialect = {
  parameter: (index) => `$${index}`,
  integer: "BIGINT",
  bytes: "BYTEA",
  keyedTable: "",
};

// The database's clock, in ms: every writer's lease is judged by one clock, whatever the machines' clocks say.
export const nowMs = "(floor(extract(epoch from clock_timestamp()) * 1000))::bigint";

export async function createPool(connectionString: string): Promise<PostgresPool> {
  let pg: { Pool: new (config: { connectionString: string }) => PostgresPool };
  try {
    const loaded = (await import("pg")) as unknown as { default?: typeof pg } & typeof pg;
    pg = loaded.default ?? loaded;
  } catch (error) {
    throw new StoreError(`postgresStore needs the "pg" package (npm install pg): ${errorMessage(error)}`, {
      code: "invalid-argument",
      cause: error,
    });
  }
  const pool = new pg.Pool({ connectionString });
  // An idle connection the server closed (a restart) must not crash the process: the next query reconnects.
  (pool as unknown as { on: (event: string, listener: () => void) => void }).on("error", () => undefined);
  return pool;
}

export async function transaction<T>(pool: PostgresPool, work: (client: PostgresClient) => Promise<T>): Promise<T> {
  let client: PostgresClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw unavailable("could not connect", error);
  }
  let broken = false;
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    broken = isConnectionError(error);
    if (!broken) await client.query("ROLLBACK").catch(() => undefined);
    throw error instanceof StoreError || !broken ? error : unavailable("lost the connection", error);
  } finally {
    client.release(broken);
  }
}

export function unavailable(what: string, error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  return new StoreError(`postgresStore: ${what}: ${errorMessage(error)}`, {
    code: "unavailable",
    cause: error,
    retryable: isConnectionError(error),
  });
}

export function isUnavailable(error: unknown): boolean {
  return (error instanceof StoreError && error.code === "unavailable") || isConnectionError(error);
}

// Errors of a database that is down, restarting or unreachable: worth retrying.
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") {
    const message = error instanceof Error ? error.message : "";
    return /Connection terminated|connection timeout|Client has encountered a connection error/i.test(message);
  }
  return (
    ["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH"].includes(code) ||
    code.startsWith("08") || // connection exception
    code === "57P01" || // admin shutdown
    code === "57P02" || // crash shutdown
    code === "57P03" // cannot connect now (starting up)
  );
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
