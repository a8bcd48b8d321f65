import type { Kysely } from 'kysely';

/**
 * The legacy v1 product beside v2, with the conventions of 0001 (epoch-millisecond BIGINT times, JSON TEXT).
 *
 * `v1_assistants`: what only a v1 assistant has, kept beside the v2 agent it is (same id): the whole v1 document
 * as the client last wrote it (variant, icpContext, callSettings, telephony, knowledge base, ...). Fields that
 * meet a v2 setting are read from the agent, so an edit on either side shows on both.
 *
 * `v1_calls`: what a call placed through v1 carries besides the v2 call (same id): where its v1 webhooks go,
 * the metadata echoed on them, the payload, the priority, and the organization public key that signs them.
 *
 * `v1_integrations`: a workspace's v1 tool integrations (`POST /v1/admin/tools/create`): v2 tool definitions
 * grouped under an `integration_id`, which assistants name in `agent.tools`.
 *
 * `v1_documents`: knowledge-base documents uploaded by URL (`POST /v1/admin/knowledge-base/upload`), fetched
 * once through the address guard, their text kept for the prompts of the assistants that name their URL.
 *
 * `v1_workspace_access`: the workspaces an organization (its public key) may address with the `workspace` header
 * besides its own: those it onboarded (`POST /v2/workspace/onboard/custom`).
 *
 * `v1_credentials.private_key_sealed`: v1 webhooks are signed with the organization private key, which is
 * stored hashed; the first request authenticated with it seals it (AES-256-GCM under the deployment key) so the
 * dispatcher can sign. `events.v1_public_key`: set on a v1 webhook, which is signed v1's way with that key.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('v1_assistants')
    .addColumn('agent_id', 'text', (c) => c.primaryKey().references('agents.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('v1_assistants_workspace_idx')
    .on('v1_assistants')
    .columns(['workspace_id', 'agent_id'])
    .execute();
  await db.schema
    .createTable('v1_calls')
    .addColumn('call_id', 'text', (c) => c.primaryKey().references('calls.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('callback_url', 'text')
    .addColumn('metadata', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('v1_integrations')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('integration_id', 'text', (c) => c.notNull())
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('v1_integrations_pk', ['workspace_id', 'integration_id'])
    .execute();
  await db.schema
    .createTable('v1_documents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('v1_documents_url_idx')
    .on('v1_documents')
    .columns(['workspace_id', 'url'])
    .unique()
    .execute();
  await db.schema
    .createTable('v1_workspace_access')
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('v1_workspace_access_pk', ['public_key', 'workspace_id'])
    .execute();
  await db.schema.alterTable('v1_credentials').addColumn('private_key_sealed', 'text').execute();
  await db.schema.alterTable('events').addColumn('v1_public_key', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('events').dropColumn('v1_public_key').execute();
  await db.schema.alterTable('v1_credentials').dropColumn('private_key_sealed').execute();
  await db.schema.dropTable('v1_workspace_access').execute();
  await db.schema.dropTable('v1_integrations').execute();
  await db.schema.dropIndex('v1_documents_url_idx').execute();
  await db.schema.dropTable('v1_documents').execute();
  await db.schema.dropTable('v1_calls').execute();
  await db.schema.dropIndex('v1_assistants_workspace_idx').execute();
  await db.schema.dropTable('v1_assistants').execute();
}
