import type { Kysely } from 'kysely';

/**
 * Tool secrets and the record of tool runs, with the conventions of 0001 (epoch-millisecond BIGINT times).
 *
 * `tool_secrets.sealed` is the AES-256-GCM envelope of the value (see core/secrets/cipher.ts): the clear value
 * is never stored. Names are unique per workspace and are what tool templates refer to.
 *
 * `call_tool_runs` holds one row per run of a tool on a call: appended by whichever process ran it (dialer,
 * gateway, dispatcher), read back as the call's `tool_calls`. No request or response bodies are kept.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tool_secrets')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('tool_secrets_pk', ['workspace_id', 'name'])
    .execute();

  await db.schema
    .createTable('call_tool_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('call_id', 'text', (c) => c.notNull().references('calls.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('phase', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('http_status', 'integer')
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('call_tool_runs_call_idx')
    .on('call_tool_runs')
    .columns(['call_id', 'id'])
    .execute();

  // A post_call tool's delivery rides the webhook outbox; this names the tool (agent, revision, tool name), whose
  // URL and header templates are rendered at each attempt, so no secret value is ever stored with the event.
  await db.schema.alterTable('events').addColumn('tool_target', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('events').dropColumn('tool_target').execute();
  await db.schema.dropTable('call_tool_runs').execute();
  await db.schema.dropTable('tool_secrets').execute();
}
