import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  Kysely,
  PostgresDialect,
  SqliteAdapter,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';
import pg from 'pg';
import type { Database } from './db.ts';

/** How long a SQLite connection waits for another process's write lock before failing (ms). */
const SQLITE_BUSY_TIMEOUT_MS = 5_000;
/** Connections per process to PostgreSQL: enough for admission bursts, small enough for many processes. */
const PG_POOL_MAX = 10;
const PG_INT8_OID = 20;

export type DialectName = 'sqlite' | 'postgres';

/**
 * Transactions on SQLite start with BEGIN IMMEDIATE: the write lock is taken up front, so a transaction that
 * reads and then writes never fails half way when another process (an operator CLI, say) writes the same file.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/** SQLite does support transactional DDL; telling Kysely so makes each migration run atomically. */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class StoreSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }
  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

/** Prepared statements kept per connection; queries are built from a small set of shapes. */
const STATEMENT_CACHE_SIZE = 512;

/**
 * Kysely prepares every statement anew; with better-sqlite3 that costs more than running it (measured: about
 * 17 µs prepare+get against 4 µs for a cached statement). The single connection runs one query at a time, so a
 * statement can be reused safely once the previous call returned.
 */
function withStatementCache(database: SqliteDatabase.Database): SqliteDialectConfig['database'] {
  const cache = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => {
      cache.clear();
      database.close();
    },
    prepare: (sql: string) => {
      let statement = cache.get(sql);
      if (!statement) {
        statement = database.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
        cache.set(sql, statement);
      }
      return statement;
    },
  };
}

/** Opens `file` (or `:memory:`) with WAL, foreign keys and a busy timeout. */
export function openSqlite(file: string): Kysely<Database> {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const database = new SqliteDatabase(file);
  if (file !== ':memory:') database.pragma('journal_mode = WAL');
  database.pragma('foreign_keys = ON');
  database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  database.pragma('synchronous = NORMAL');
  return new Kysely<Database>({
    dialect: new StoreSqliteDialect({ database: withStatementCache(database) }),
  });
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new RangeError(`schema "${schema}": use lowercase letters, digits and underscores (at most 63)`);
  }
  return schema;
}

/** int8 (BIGINT) as a number: paise and epoch-ms values are far below 2^53; anything larger is refused. */
function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`int8 value ${text} does not fit a safe integer`);
  return value;
}

/** Type parsers for this pool only (the global pg.types registry is left alone). */
const typeParsers: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === PG_INT8_OID && format !== 'binary'
      ? parseInt8
      : pg.types.getTypeParser(oid, format ?? 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

async function createSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`create schema if not exists "${schema}"`);
  } catch (error) {
    // Two processes creating the same schema at once: the loser sees a unique violation; the schema exists.
    const code = (error as { code?: string }).code;
    if (code !== '23505' && code !== '42P06') throw error;
  } finally {
    await client.end();
  }
}

/**
 * Opens a pool on `url`. With `schema`, the schema is created when missing and every connection of the pool
 * starts with `search_path` set to it (a startup option, so no connection ever runs without it).
 */
export async function openPostgres(url: string, schema?: string): Promise<Kysely<Database>> {
  if (schema !== undefined) {
    assertSchemaName(schema);
    await createSchema(url, schema);
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: PG_POOL_MAX,
    types: typeParsers,
    ...(schema !== undefined ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle connection dropped by the server is discarded by the pool; without a listener it would crash
  // the process. Queries on a broken connection still fail and reach their callers.
  pool.on('error', () => {});
  // The same for a connection that drops while checked out between queries (inside a transaction): the pool
  // listens only to idle ones, and the next query on it fails and reaches its caller anyway.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
