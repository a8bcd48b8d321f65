import { type Kysely, sql } from 'kysely';

/**
 * Phone numbers, pools and the rent flow's records, with the conventions of 0001 (epoch-millisecond BIGINT
 * times, integer paise, INTEGER 0/1 booleans, JSON as TEXT).
 *
 * `phone_numbers` holds every number a workspace rents (`managed`) or imports (`customer`). `version` is raised
 * by every change (the API's optimistic concurrency). Health lives in `health` (what the owner or the pacer set:
 * active, resting, cooling, retired) with `resting_until`; warming is derived from `warming_until`. A number
 * stays in the table once released (`released_at`), or once past `releases_at` (a managed number whose owner
 * stopped its renewal is released at the end of its paid period); a number is held by at most one live row
 * of a workspace.
 *
 * `phone_pools` groups numbers; a number belongs to at most one pool (`phone_numbers.pool_id`).
 * `telephony_submissions` are the business documents sent for review; `telephony_quotes` the prices quoted
 * for a number, each usable once by a rent.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('phone_numbers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('number', 'text', (c) => c.notNull())
    .addColumn('ownership', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_ref', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('setup_error', 'text')
    .addColumn('agent_id', 'text')
    .addColumn('incoming_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('pool_id', 'text')
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('health', 'text', (c) => c.notNull())
    .addColumn('resting_until', 'bigint')
    .addColumn('rests', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('warming_until', 'bigint', (c) => c.notNull())
    .addColumn('paid_until', 'bigint')
    .addColumn('renews_at', 'bigint')
    .addColumn('releases_at', 'bigint')
    .addColumn('released_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('phone_numbers_ownership_check', sql`ownership in ('managed', 'customer')`)
    .addCheckConstraint('phone_numbers_state_check', sql`state in ('imported', 'ready', 'error')`)
    .addCheckConstraint(
      'phone_numbers_health_check',
      sql`health in ('active', 'resting', 'cooling', 'retired')`,
    )
    .addCheckConstraint('phone_numbers_version_check', sql`version >= 1`)
    .execute();
  await db.schema
    .createIndex('phone_numbers_workspace_idx')
    .on('phone_numbers')
    .columns(['workspace_id', 'id'])
    .execute();
  await db.schema
    .createIndex('phone_numbers_held_idx')
    .on('phone_numbers')
    .columns(['workspace_id', 'number'])
    .unique()
    .where(sql.ref('released_at'), 'is', null)
    .execute();
  await db.schema
    .createIndex('phone_numbers_pool_idx')
    .on('phone_numbers')
    .columns(['workspace_id', 'pool_id'])
    .execute();

  await db.schema
    .createTable('phone_pools')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('max_per_hour', 'integer')
    .addColumn('default_for_campaigns', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint(
      'phone_pools_purpose_check',
      sql`purpose in ('outreach', 'reminders', 'support', 'other')`,
    )
    .execute();
  await db.schema
    .createIndex('phone_pools_workspace_idx')
    .on('phone_pools')
    .columns(['workspace_id', 'id'])
    .execute();

  await db.schema
    .createTable('telephony_submissions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_ref', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reasons', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('reviewed_at', 'bigint')
    .addCheckConstraint(
      'telephony_submissions_status_check',
      sql`status in ('pending', 'approved', 'rejected')`,
    )
    .execute();
  await db.schema
    .createIndex('telephony_submissions_workspace_idx')
    .on('telephony_submissions')
    .columns(['workspace_id', 'id'])
    .execute();

  await db.schema
    .createTable('telephony_quotes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('number', 'text', (c) => c.notNull())
    .addColumn('amount_paise', 'bigint', (c) => c.notNull())
    .addColumn('period_months', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();

  // A number's recent calls (its answer rate) are read at every pool pick.
  await db.schema
    .createIndex('calls_phone_number_idx')
    .on('calls')
    .columns(['phone_number_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('calls_phone_number_idx').execute();
  await db.schema.dropTable('telephony_quotes').execute();
  await db.schema.dropTable('telephony_submissions').execute();
  await db.schema.dropTable('phone_pools').execute();
  await db.schema.dropTable('phone_numbers').execute();
}
