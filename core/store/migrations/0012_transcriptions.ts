import type { Kysely } from 'kysely';

/**
 * Transcription jobs (`POST /v2/transcriptions`), with the conventions of 0001. One row per job: where its audio
 * is (`source` `upload`: a file under `DATA_DIR/transcriptions`; `url`: fetched by the worker), its state
 * (`queued`, `running`, then `completed`, `degraded` or `failed`) and, once ended, its result (`segments`,
 * JSON) and charge. `lease_owner`/`lease_until` are the running worker's claim, renewed while it works; a claim
 * that lapsed (its worker died) is free to take again, and `attempts` counts the claims, so a job that keeps
 * killing its workers ends `failed` instead of running forever. Rows and audio live 30 days.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('transcriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('language_code', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('audio_url', 'text')
    .addColumn('media_type', 'text')
    .addColumn('audio_bytes', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'bigint')
    .addColumn('channels', 'integer')
    .addColumn('segments', 'text')
    .addColumn('speakers_method', 'text')
    .addColumn('failure', 'text')
    .addColumn('cost_paise', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('transcriptions_workspace_idx')
    .on('transcriptions')
    .columns(['workspace_id', 'id'])
    .execute();
  await db.schema
    .createIndex('transcriptions_status_lease')
    .on('transcriptions')
    .columns(['status', 'lease_until'])
    .execute();
  await db.schema
    .createIndex('transcriptions_created')
    .on('transcriptions')
    .columns(['created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('transcriptions').execute();
}
