import type { Kysely } from 'kysely';

/**
 * Flow jobs, with the conventions of 0001: flow tests (`kind` `refine`, `frf_...`) and flow drafts (`generate`,
 * `fdr_...`).
 *
 * One row per job: the request as sent (`input`, JSON, written once) and the job's state (`state`, JSON,
 * rewritten after every step: every model answer, test, review and revision), so a worker that dies mid-job
 * leaves a job another worker resumes where it stopped. `lease_owner`/`lease_until` are the running worker's
 * claim; a claim that lapsed is free to take. Rows live 24 hours (the workers delete older ones).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('flow_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('flow_jobs_workspace_created')
    .on('flow_jobs')
    .columns(['workspace_id', 'kind', 'created_at'])
    .execute();
  await db.schema
    .createIndex('flow_jobs_agent_created')
    .on('flow_jobs')
    .columns(['workspace_id', 'agent_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('flow_jobs_status_lease')
    .on('flow_jobs')
    .columns(['status', 'lease_until'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('flow_jobs').execute();
}
