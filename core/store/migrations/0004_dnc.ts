import type { Kysely } from 'kysely';

/**
 * The workspace's do-not-call list, and the operator's switch for campaigns (which the list belongs to), with
 * the conventions of 0001.
 *
 * `dnc_entries` holds one row per listed number of a workspace: the number in E.164, why it was listed (free
 * text from the API, at most 200 characters), how (`api`, or `opt_out` when a caller asked on a call, whose id
 * is kept), and when. Campaigns read it at the moment a contact is about to be dialled.
 *
 * `workspaces.campaigns_enabled` is on unless the operator turns it off; off, every `/v2/campaigns` and
 * `/v2/dnc` route answers `503 campaigns_unavailable`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('dnc_entries')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('number', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('call_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('dnc_entries_pk', ['workspace_id', 'number'])
    .execute();

  await db.schema
    .alterTable('workspaces')
    .addColumn('campaigns_enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('workspaces').dropColumn('campaigns_enabled').execute();
  await db.schema.dropTable('dnc_entries').execute();
}
