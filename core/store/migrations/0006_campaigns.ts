import { type Kysely, sql } from 'kysely';

/**
 * Campaigns and their contacts, with the conventions of 0001.
 *
 * A campaign's settings (agent, pool, tier, calling window, pace, retries, budget, webhook, variables) are one
 * JSON document (`settings`), validated before it is stored; what the dialler queries and updates (status,
 * money, progress) are columns. Deleting a campaign that is not running marks it deleted; its calls keep their
 * `campaign_id`.
 *
 * `campaign_contacts` holds one row per number of a campaign (unique per campaign: a number given twice is a
 * duplicate). A CSV upload writes its rows in batches as `uploading` under one `upload_id` and turns them
 * `pending` in one statement at its end, so the dialler never sees half an upload and a failed upload removes
 * its rows.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('campaigns')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('pause_reason', 'text')
    .addColumn('spent_paise', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('held_paise', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('deleted_at', 'bigint')
    .addCheckConstraint('campaigns_status_check', sql`status in ('play', 'paused', 'stopped', 'completed')`)
    .execute();
  await db.schema
    .createIndex('campaigns_workspace_idx')
    .on('campaigns')
    .columns(['workspace_id', 'id'])
    .execute();

  await db.schema
    .createTable('campaign_contacts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('campaign_id', 'text', (c) => c.notNull().references('campaigns.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('to_number', 'text', (c) => c.notNull())
    .addColumn('variables', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('call_ids', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('upload_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('campaign_contacts_number_idx')
    .on('campaign_contacts')
    .columns(['campaign_id', 'to_number'])
    .unique()
    .execute();
  await db.schema
    .createIndex('campaign_contacts_status_idx')
    .on('campaign_contacts')
    .columns(['campaign_id', 'status', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('campaign_contacts').execute();
  await db.schema.dropTable('campaigns').execute();
}
