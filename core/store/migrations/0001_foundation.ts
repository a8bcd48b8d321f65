import { type Kysely, sql } from 'kysely';

/**
 * The foundation tables. The same DDL runs on SQLite and PostgreSQL:
 * - paise and epoch-millisecond times are BIGINT (INTEGER affinity on SQLite; int8 on PostgreSQL);
 * - booleans are INTEGER 0/1;
 * - JSON documents (agent content) are TEXT on both: the store never queries inside them, and TEXT keeps the
 *   document byte for byte (JSONB would reorder keys and drop duplicates on PostgreSQL only).
 * Every row carries workspace_id. Ledger kinds and revision reasons are left unchecked so later modules can
 * add values without rebuilding tables; closed sets (mode, statuses) are CHECKed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('queued_events_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('workspaces_mode_check', sql`mode in ('sandbox', 'production')`)
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('api_keys_workspace_idx')
    .on('api_keys')
    .columns(['workspace_id', 'id'])
    .execute();

  await db.schema
    .createTable('webhook_secrets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('secret', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('webhook_secrets_workspace_idx')
    .on('webhook_secrets')
    .columns(['workspace_id', 'id'])
    .execute();

  await db.schema
    .createTable('v1_credentials')
    .addColumn('public_key', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('private_key_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('v1_credentials_workspace_idx')
    .on('v1_credentials')
    .column('workspace_id')
    .execute();

  await db.schema
    .createTable('agents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('deleted_at', 'bigint')
    .addCheckConstraint('agents_revision_check', sql`revision >= 1`)
    .execute();
  await db.schema.createIndex('agents_workspace_idx').on('agents').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('agent_revisions')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('restored_from', 'integer')
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('agent_revisions_pk', ['agent_id', 'revision'])
    .execute();

  await db.schema
    .createTable('wallet_accounts')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id'))
    .addColumn('balance_paise', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('held_paise', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('wallet_accounts_balance_check', sql`balance_paise >= 0`)
    .addCheckConstraint('wallet_accounts_held_check', sql`held_paise >= 0 and held_paise <= balance_paise`)
    .execute();

  await db.schema
    .createTable('wallet_ledger')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('amount_paise', 'bigint', (c) => c.notNull())
    .addColumn('balance_after_paise', 'bigint', (c) => c.notNull())
    .addColumn('reference', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('wallet_ledger_reference_unique', ['workspace_id', 'kind', 'reference'])
    .addCheckConstraint('wallet_ledger_balance_check', sql`balance_after_paise >= 0`)
    .execute();
  await db.schema
    .createIndex('wallet_ledger_workspace_idx')
    .on('wallet_ledger')
    .columns(['workspace_id', 'id'])
    .execute();

  await db.schema
    .createTable('wallet_holds')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('reference', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('amount_paise', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('captured_paise', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('settled_at', 'bigint')
    .addPrimaryKeyConstraint('wallet_holds_pk', ['workspace_id', 'reference'])
    .addCheckConstraint('wallet_holds_status_check', sql`status in ('held', 'captured', 'released')`)
    .addCheckConstraint(
      'wallet_holds_amount_check',
      sql`amount_paise >= 0 and captured_paise >= 0 and captured_paise <= amount_paise`,
    )
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['workspace_id', 'key'])
    .addCheckConstraint('idempotency_keys_status_check', sql`status in ('in_flight', 'done')`)
    .execute();
  await db.schema
    .createIndex('idempotency_keys_expires_idx')
    .on('idempotency_keys')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'idempotency_keys',
    'wallet_holds',
    'wallet_ledger',
    'wallet_accounts',
    'agent_revisions',
    'agents',
    'v1_credentials',
    'webhook_secrets',
    'api_keys',
    'workspaces',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
