import type { Kysely } from 'kysely';

/**
 * A legacy v1 assistant's `callSettings.retryProtocol` places a call again when it was not answered or busy:
 * the new call is a new v1 call, and `v1_calls` says which attempt it is (`attempt`, 1 for the call placed
 * through `/v2/call/initiate`), which call it retries (`retry_of`), and the earliest it may be dialled
 * (`not_before`, epoch ms; null: at once).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('v1_calls')
    .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.alterTable('v1_calls').addColumn('retry_of', 'text').execute();
  await db.schema.alterTable('v1_calls').addColumn('not_before', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('v1_calls').dropColumn('not_before').execute();
  await db.schema.alterTable('v1_calls').dropColumn('retry_of').execute();
  await db.schema.alterTable('v1_calls').dropColumn('attempt').execute();
}
