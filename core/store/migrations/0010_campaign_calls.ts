import type { Kysely } from 'kysely';

/**
 * Campaign calls, with the conventions of 0001.
 *
 * A call placed by a campaign's dialler carries its `campaign_id` (null for single calls): the API filters by
 * it and the campaign's money is read from its calls. `spent_paise` and `held_paise` of 0006 go: a campaign's
 * spending is the sum of its ended calls' charges and its hold the sum of its open calls' worst cases, read
 * from the calls themselves, so they can never disagree with the ledger.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('calls').addColumn('campaign_id', 'text').execute();
  await db.schema.createIndex('calls_campaign_idx').on('calls').columns(['campaign_id', 'status']).execute();
  await db.schema.alterTable('campaigns').dropColumn('spent_paise').execute();
  await db.schema.alterTable('campaigns').dropColumn('held_paise').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('campaigns')
    .addColumn('spent_paise', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('campaigns')
    .addColumn('held_paise', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.dropIndex('calls_campaign_idx').execute();
  await db.schema.alterTable('calls').dropColumn('campaign_id').execute();
}
