import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import type { Database } from '../db.ts';
import * as foundation from './0001_foundation.ts';
import * as callsEvents from './0002_calls_events.ts';
import * as toolsSecrets from './0003_tools_secrets.ts';
import * as dnc from './0004_dnc.ts';
import * as telephony from './0005_telephony.ts';
import * as campaigns from './0006_campaigns.ts';
import * as inbound from './0007_inbound.ts';
import * as speech from './0008_speech.ts';
import * as flowJobs from './0009_flow_jobs.ts';
import * as campaignCalls from './0010_campaign_calls.ts';
import * as v1 from './0011_v1.ts';
import * as transcriptions from './0012_transcriptions.ts';
import * as v1Retries from './0013_v1_retries.ts';

/**
 * Every migration, in order, listed statically (no folder scan: the list is what ships). Append new ones with
 * the next number; never edit or reorder an applied one.
 */
const MIGRATIONS: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_calls_events': callsEvents,
  '0003_tools_secrets': toolsSecrets,
  '0004_dnc': dnc,
  '0005_telephony': telephony,
  '0006_campaigns': campaigns,
  '0007_inbound': inbound,
  '0008_speech': speech,
  '0009_flow_jobs': flowJobs,
  '0010_campaign_calls': campaignCalls,
  '0011_v1': v1,
  '0012_transcriptions': transcriptions,
  '0013_v1_retries': v1Retries,
};

const provider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};

export class MigrationError extends Error {
  override name = 'MigrationError';
}

/**
 * Brings the schema to the latest version. Safe to run on every start and from several processes at once:
 * Kysely's migrator takes a lock (an advisory lock on PostgreSQL) and skips applied migrations.
 * `schema` (PostgreSQL only) keeps the migration bookkeeping tables in that schema.
 */
export async function migrateToLatest(db: Kysely<Database>, schema?: string): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const cause = error instanceof Error ? error : undefined;
    const which = failed ? ` ${failed.migrationName}` : '';
    throw new MigrationError(`migration${which} failed${cause ? `: ${cause.message}` : ''}`, {
      cause: error,
    });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
