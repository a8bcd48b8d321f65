import type { Kysely } from 'kysely';

/**
 * Text to speech requests, with the conventions of 0001: one row per `POST /v2/speech` whose audio was
 * synthesised and charged, for the cost readback (`GET /v2/speech/{id}`). The text itself is not kept: only
 * its length in characters (what the price is per), the voice, the format, the audio's length and the charge
 * (the same amount as the request's one ledger entry, whose reference is the row's id).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('speech_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('voice_id', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('sample_rate', 'integer', (c) => c.notNull())
    .addColumn('characters', 'integer', (c) => c.notNull())
    .addColumn('audio_ms', 'bigint', (c) => c.notNull())
    .addColumn('cost_paise', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('speech_requests_workspace_idx')
    .on('speech_requests')
    .columns(['workspace_id', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('speech_requests').execute();
}
