import { type Kysely, sql } from 'kysely';

/**
 * Calls and the transactional outbox of webhook events (docs/architecture.md, "Money and events"), with the same
 * conventions as 0001: epoch-millisecond times and paise are BIGINT, booleans INTEGER 0/1, JSON documents TEXT.
 *
 * `calls.status` is CHECKed against the ten statuses of the interface; the indexes serve the call list (newest
 * first per workspace, optionally by status or agent), the dialer (FIFO of queued calls per workspace, the
 * workspaces that have any), the queue-depth count, and orphan recovery (live calls per gateway node).
 *
 * `events.body` is the exact JSON text of the envelope: written once with the state change, sent byte for byte
 * on every attempt and replay. A null `webhook_url` means nothing to deliver (status `none`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('calls')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
    .addColumn('agent_revision', 'integer', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('to_number', 'text')
    .addColumn('from_number', 'text')
    .addColumn('tier', 'text', (c) => c.notNull())
    .addColumn('per_min_paise', 'bigint', (c) => c.notNull())
    .addColumn('max_duration_secs', 'integer', (c) => c.notNull())
    .addColumn('variables', 'text', (c) => c.notNull())
    .addColumn('webhook_url', 'text')
    .addColumn('phone_number_id', 'text')
    .addColumn('pool_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('ended_reason', 'text')
    .addColumn('carrier', 'text')
    .addColumn('carrier_call_id', 'text')
    .addColumn('gateway_node', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('dialing_at', 'bigint')
    .addColumn('answered_at', 'bigint')
    .addColumn('ended_at', 'bigint')
    .addColumn('duration_secs', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('cost_paise', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('transcript_available', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('recording_available', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('analysis', 'text')
    .addColumn('latency', 'text')
    .addColumn('error', 'text')
    .addCheckConstraint(
      'calls_status_check',
      sql`status in ('queued', 'dialing', 'in_progress', 'completed', 'voicemail', 'no_answer', 'busy', 'failed', 'timeout', 'aborted')`,
    )
    .addCheckConstraint('calls_channel_check', sql`channel in ('phone', 'web')`)
    .addCheckConstraint(
      'calls_amounts_check',
      sql`per_min_paise >= 0 and cost_paise >= 0 and duration_secs >= 0 and max_duration_secs > 0`,
    )
    .execute();
  // The list, newest first (ids are time-ordered), and its filters.
  await db.schema.createIndex('calls_workspace_idx').on('calls').columns(['workspace_id', 'id']).execute();
  // Dialer FIFO per workspace, the open-call count (queue depth) and the status filter of the list.
  await db.schema
    .createIndex('calls_workspace_status_idx')
    .on('calls')
    .columns(['workspace_id', 'status', 'id'])
    .execute();
  await db.schema
    .createIndex('calls_workspace_agent_idx')
    .on('calls')
    .columns(['workspace_id', 'agent_id', 'id'])
    .execute();
  // Workspaces with queued calls, and live calls by age, across workspaces.
  await db.schema
    .createIndex('calls_status_idx')
    .on('calls')
    .columns(['status', 'workspace_id', 'dialing_at'])
    .execute();
  // Orphan recovery: the live calls a gateway node hosts.
  await db.schema
    .createIndex('calls_gateway_node_idx')
    .on('calls')
    .columns(['gateway_node', 'status'])
    .execute();

  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('call_id', 'text')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('webhook_url', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', 'bigint')
    .addCheckConstraint('events_status_check', sql`status in ('pending', 'delivered', 'dead', 'none')`)
    .addCheckConstraint('events_attempts_check', sql`attempts >= 0`)
    .execute();
  // Due deliveries (`status = 'pending' and next_attempt_at <= now`) and the dead-letter list.
  await db.schema.createIndex('events_due_idx').on('events').columns(['status', 'next_attempt_at']).execute();
  await db.schema
    .createIndex('events_call_idx')
    .on('events')
    .columns(['workspace_id', 'call_id', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('events').execute();
  await db.schema.dropTable('calls').execute();
}
