import { LIVE_CALL_STATUSES } from '../call-types.ts';
import type { V1AssistantsTable, V1CallsTable, V1DocumentsTable, V1IntegrationsTable } from '../db.ts';
import { rowId } from '../keys.ts';
import { assertLimit } from '../page.ts';
import type { Scope } from '../scope.ts';
import type {
  NewV1Call,
  V1AssistantRecord,
  V1CallChange,
  V1CallRecord,
  V1DocumentRecord,
  V1IntegrationRecord,
  V1Repo,
} from '../v1-types.ts';
import type { JsonObject } from '../values.ts';

function toAssistant(row: V1AssistantsTable): V1AssistantRecord {
  return {
    agentId: row.agent_id,
    workspaceId: row.workspace_id,
    document: JSON.parse(row.document),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

function toIntegration(row: V1IntegrationsTable): V1IntegrationRecord {
  return {
    workspaceId: row.workspace_id,
    integrationId: row.integration_id,
    document: JSON.parse(row.document),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

function toDocument(row: V1DocumentsTable): V1DocumentRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    url: row.url,
    title: row.title,
    type: row.type,
    text: row.text,
    createdAt: Number(row.created_at),
  };
}

function toCall(row: V1CallsTable): V1CallRecord {
  return {
    callId: row.call_id,
    workspaceId: row.workspace_id,
    publicKey: row.public_key,
    callbackUrl: row.callback_url,
    metadata: row.metadata === null ? null : JSON.parse(row.metadata),
    payload: JSON.parse(row.payload) as JsonObject,
    priority: row.priority,
    attempt: row.attempt,
    retryOf: row.retry_of,
    notBefore: row.not_before === null ? null : Number(row.not_before),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** The legacy v1 product's own rows: assistants' v1-only fields, v1 calls' webhook targets, sealed keys. */
export class V1Store implements V1Repo {
  constructor(private readonly scope: Scope) {}

  async assistant(workspaceId: string, agentId: string): Promise<V1AssistantRecord | undefined> {
    const row = await this.scope.db
      .selectFrom('v1_assistants')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('agent_id', '=', agentId)
      .executeTakeFirst();
    return row ? toAssistant(row) : undefined;
  }

  async assistants(workspaceId: string, agentIds: readonly string[]): Promise<V1AssistantRecord[]> {
    if (agentIds.length === 0) return [];
    const rows = await this.scope.db
      .selectFrom('v1_assistants')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('agent_id', 'in', [...agentIds])
      .execute();
    return rows.map(toAssistant);
  }

  async putAssistant(input: { workspaceId: string; agentId: string; document: JsonObject }): Promise<void> {
    const now = this.scope.now;
    const document = JSON.stringify(input.document);
    const updated = await this.scope.db
      .updateTable('v1_assistants')
      .set({ document })
      .where('workspace_id', '=', input.workspaceId)
      .where('agent_id', '=', input.agentId)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) > 0) return;
    await this.scope.db
      .insertInto('v1_assistants')
      .values({
        agent_id: input.agentId,
        workspace_id: input.workspaceId,
        document,
        created_at: now,
        // No update yet: creating an assistant does not start the update cooldown.
        updated_at: 0,
      })
      .execute();
  }

  async claimUpdate(workspaceId: string, agentId: string, cooldownMs: number): Promise<boolean> {
    const now = this.scope.now;
    const result = await this.scope.db
      .updateTable('v1_assistants')
      .set({ updated_at: now })
      .where('workspace_id', '=', workspaceId)
      .where('agent_id', '=', agentId)
      .where('updated_at', '<=', now - cooldownMs)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0) return true;
    return (await this.assistant(workspaceId, agentId)) === undefined;
  }

  async insertCall(record: NewV1Call): Promise<V1CallRecord> {
    const now = this.scope.now;
    const row: V1CallsTable = {
      call_id: record.callId,
      workspace_id: record.workspaceId,
      public_key: record.publicKey,
      callback_url: record.callbackUrl,
      metadata:
        record.metadata === null || record.metadata === undefined ? null : JSON.stringify(record.metadata),
      payload: JSON.stringify(record.payload),
      priority: record.priority,
      attempt: record.attempt ?? 1,
      retry_of: record.retryOf ?? null,
      not_before: record.notBefore ?? null,
      created_at: now,
      updated_at: now,
    };
    await this.scope.db.insertInto('v1_calls').values(row).execute();
    return toCall(row);
  }

  async call(workspaceId: string, callId: string): Promise<V1CallRecord | undefined> {
    const row = await this.scope.db
      .selectFrom('v1_calls')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('call_id', '=', callId)
      .executeTakeFirst();
    return row ? toCall(row) : undefined;
  }

  async countLiveCalls(workspaceId: string, agentId: string): Promise<number> {
    const row = await this.scope.db
      .selectFrom('v1_calls')
      .innerJoin('calls', 'calls.id', 'v1_calls.call_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('v1_calls.workspace_id', '=', workspaceId)
      .where('calls.workspace_id', '=', workspaceId)
      .where('calls.agent_id', '=', agentId)
      .where('calls.status', 'in', LIVE_CALL_STATUSES)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async updateCall(
    workspaceId: string,
    callId: string,
    change: V1CallChange,
  ): Promise<V1CallRecord | undefined> {
    await this.scope.db
      .updateTable('v1_calls')
      .set({
        updated_at: this.scope.now,
        ...(change.callbackUrl !== undefined ? { callback_url: change.callbackUrl } : {}),
        ...(change.metadata !== undefined
          ? { metadata: change.metadata === null ? null : JSON.stringify(change.metadata) }
          : {}),
        ...(change.payload !== undefined ? { payload: JSON.stringify(change.payload) } : {}),
        ...(change.priority !== undefined ? { priority: change.priority } : {}),
      })
      .where('workspace_id', '=', workspaceId)
      .where('call_id', '=', callId)
      .execute();
    return this.call(workspaceId, callId);
  }

  async putIntegration(
    workspaceId: string,
    integrationId: string,
    document: JsonObject,
  ): Promise<V1IntegrationRecord> {
    const now = this.scope.now;
    const text = JSON.stringify(document);
    const updated = await this.scope.db
      .updateTable('v1_integrations')
      .set({ document: text, updated_at: now })
      .where('workspace_id', '=', workspaceId)
      .where('integration_id', '=', integrationId)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) {
      await this.scope.db
        .insertInto('v1_integrations')
        .values({
          workspace_id: workspaceId,
          integration_id: integrationId,
          document: text,
          created_at: now,
          updated_at: now,
        })
        .execute();
    }
    const stored = await this.integration(workspaceId, integrationId);
    if (!stored) throw new Error(`integration ${integrationId} vanished while written`);
    return stored;
  }

  async integration(workspaceId: string, integrationId: string): Promise<V1IntegrationRecord | undefined> {
    const row = await this.scope.db
      .selectFrom('v1_integrations')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('integration_id', '=', integrationId)
      .executeTakeFirst();
    return row ? toIntegration(row) : undefined;
  }

  async integrations(workspaceId: string, limit: number): Promise<V1IntegrationRecord[]> {
    const rows = await this.scope.db
      .selectFrom('v1_integrations')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('integration_id')
      .limit(assertLimit(limit))
      .execute();
    return rows.map(toIntegration);
  }

  async putDocument(record: Omit<V1DocumentRecord, 'id' | 'createdAt'>): Promise<V1DocumentRecord> {
    const now = this.scope.now;
    await this.scope.db
      .deleteFrom('v1_documents')
      .where('workspace_id', '=', record.workspaceId)
      .where('url', '=', record.url)
      .execute();
    const row: V1DocumentsTable = {
      id: rowId(now),
      workspace_id: record.workspaceId,
      url: record.url,
      title: record.title,
      type: record.type,
      text: record.text,
      created_at: now,
    };
    await this.scope.db.insertInto('v1_documents').values(row).execute();
    return toDocument(row);
  }

  async documents(
    workspaceId: string,
    options: { limit: number; urls?: readonly string[] },
  ): Promise<V1DocumentRecord[]> {
    if (options.urls?.length === 0) return [];
    let query = this.scope.db
      .selectFrom('v1_documents')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('id', 'desc')
      .limit(assertLimit(options.limit));
    if (options.urls) query = query.where('url', 'in', [...options.urls]);
    return (await query.execute()).map(toDocument);
  }

  async grantAccess(publicKey: string, workspaceId: string): Promise<void> {
    await this.scope.db
      .insertInto('v1_workspace_access')
      .values({ public_key: publicKey, workspace_id: workspaceId, created_at: this.scope.now })
      .execute();
  }

  async hasAccess(publicKey: string, workspaceId: string): Promise<boolean> {
    const row = await this.scope.db
      .selectFrom('v1_workspace_access')
      .select('workspace_id')
      .where('public_key', '=', publicKey)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    return row !== undefined;
  }

  async countAccess(publicKey: string): Promise<number> {
    const row = await this.scope.db
      .selectFrom('v1_workspace_access')
      .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
      .where('public_key', '=', publicKey)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async sealedPrivateKey(publicKey: string): Promise<{ workspaceId: string; sealed: string } | undefined> {
    const row = await this.scope.db
      .selectFrom('v1_credentials')
      .select(['workspace_id', 'private_key_sealed'])
      .where('public_key', '=', publicKey)
      .executeTakeFirst();
    if (!row?.private_key_sealed) return undefined;
    return { workspaceId: row.workspace_id, sealed: row.private_key_sealed };
  }

  async sealPrivateKey(publicKey: string, sealed: string): Promise<void> {
    await this.scope.db
      .updateTable('v1_credentials')
      .set({ private_key_sealed: sealed })
      .where('public_key', '=', publicKey)
      .where('private_key_sealed', 'is', null)
      .execute();
  }
}
