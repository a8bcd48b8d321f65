/**
 * The databases a conformance suite runs on: SQLite in a temporary directory always, PostgreSQL in a schema of
 * its own when the test environment names one (core/testing/services.ts). For tests only.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import type { Clock } from '../../clock.ts';
import { postgresUrl, uniqueName } from '../../testing/services.ts';
import { openStore, SQLITE_FILE_NAME } from '../index.ts';
import type { Store } from '../types.ts';

export type RawRow = Record<string, unknown>;

export interface StoreTarget {
  readonly name: 'sqlite' | 'postgres';
  /** A new Store on the target's database (all stores of a target share it). */
  open(clock?: Clock): Promise<Store>;
  /** Every row of `table`, read around the store, to check what is really written. */
  rawRows(table: string): Promise<RawRow[]>;
  /** Drops the database (temporary directory or schema). */
  cleanup(): Promise<void>;
}

function sqliteTarget(): StoreTarget {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'voiceagent-store-'));
  return {
    name: 'sqlite',
    open: (clock) => openStore({ dataDir, ...(clock ? { clock } : {}) }),
    rawRows: async (table) => {
      const db = new SqliteDatabase(path.join(dataDir, SQLITE_FILE_NAME), { readonly: true });
      try {
        return db.prepare(`select * from "${table}"`).all() as RawRow[];
      } finally {
        db.close();
      }
    },
    cleanup: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
  };
}

function postgresTarget(databaseUrl: string, label: string): StoreTarget {
  const schema = uniqueName(label).toLowerCase();
  const withClient = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: databaseUrl, options: `-c search_path=${schema}` });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  return {
    name: 'postgres',
    open: (clock) => openStore({ databaseUrl, dataDir: os.tmpdir(), schema, ...(clock ? { clock } : {}) }),
    rawRows: (table) => withClient(async (c) => (await c.query(`select * from "${table}"`)).rows as RawRow[]),
    cleanup: () => withClient(async (c) => void (await c.query(`drop schema if exists "${schema}" cascade`))),
  };
}

/** SQLite always; PostgreSQL too when reachable. `label` names the PostgreSQL schema. */
export async function storeTargets(label: string): Promise<StoreTarget[]> {
  const targets = [sqliteTarget()];
  const url = await postgresUrl();
  if (url) targets.push(postgresTarget(url, label));
  return targets;
}
