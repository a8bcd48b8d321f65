import { newId } from '../../ids.ts';
import type { AgentRevisionsTable, AgentsTable } from '../db.ts';
import { assertLimit, toPage } from '../page.ts';
import type { Scope } from '../scope.ts';
import type {
  AgentRecord,
  AgentRepo,
  AgentRevisionRecord,
  JsonObject,
  Page,
  RevisionReason,
} from '../types.ts';

/** Stored JSON, untyped: `storedSettings` (core/agents/stored.ts) is its one decoder. */
function parseContent(text: string): unknown {
  return JSON.parse(text);
}

function toAgent(row: AgentsTable): AgentRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    revision: row.revision,
    content: parseContent(row.content),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toRevision(row: AgentRevisionsTable): AgentRevisionRecord {
  return {
    agentId: row.agent_id,
    revision: row.revision,
    reason: row.reason,
    restoredFrom: row.restored_from,
    content: parseContent(row.content),
    createdAt: row.created_at,
  };
}

/** Agents with their revision history. Deleted agents stay in the table (soft delete) but are never returned. */
export class AgentStore implements AgentRepo {
  constructor(private readonly scope: Scope) {}

  async create(workspaceId: string, content: JsonObject): Promise<AgentRecord> {
    const now = this.scope.now;
    const row: AgentsTable = {
      id: newId('agent', now),
      workspace_id: workspaceId,
      revision: 1,
      content: JSON.stringify(content),
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    await this.scope.transaction(async ({ db }) => {
      await db.insertInto('agents').values(row).execute();
      await db
        .insertInto('agent_revisions')
        .values(revisionRow(row, 'create', null))
        .execute();
    });
    return toAgent(row);
  }

  async get(workspaceId: string, id: string): Promise<AgentRecord | undefined> {
    const row = await this.live(this.scope, workspaceId, id).executeTakeFirst();
    return row ? toAgent(row) : undefined;
  }

  async list(workspaceId: string, options: { limit: number; after?: string }): Promise<Page<AgentRecord>> {
    const limit = assertLimit(options.limit);
    const after = options.after;
    const rows = await this.scope.db
      .selectFrom('agents')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('deleted_at', 'is', null)
      .$if(after !== undefined, (q) => q.where('id', '<', after ?? ''))
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    return toPage(rows, limit, toAgent);
  }

  async save(
    workspaceId: string,
    id: string,
    options: {
      reason: RevisionReason;
      ifRevision?: number;
      restoredFrom?: number;
      change: (current: AgentRecord) => JsonObject;
    },
  ): Promise<AgentRecord | 'not_found' | 'conflict'> {
    return this.scope.transaction(async (scope) => {
      const row = await this.live(scope, workspaceId, id)
        .$if(scope.isPostgres, (q) => q.forUpdate())
        .executeTakeFirst();
      if (!row) return 'not_found';
      if (options.ifRevision !== undefined && options.ifRevision !== row.revision) return 'conflict';
      // `change` runs before any write: when it throws, the transaction has nothing to undo.
      const content = JSON.stringify(options.change(toAgent(row)));
      const now = scope.now;
      const next: AgentsTable = { ...row, revision: row.revision + 1, content, updated_at: now };
      const updated = await scope.db
        .updateTable('agents')
        .set({ revision: next.revision, content, updated_at: now })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .where('revision', '=', row.revision)
        .executeTakeFirst();
      if (updated.numUpdatedRows !== 1n) return 'conflict';
      await scope.db
        .insertInto('agent_revisions')
        .values(revisionRow(next, options.reason, options.restoredFrom ?? null))
        .execute();
      return toAgent(next);
    });
  }

  async softDelete(workspaceId: string, id: string): Promise<boolean> {
    const result = await this.scope.db
      .updateTable('agents')
      .set({ deleted_at: this.scope.now })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Newest first; undefined when the agent is unknown, deleted or another workspace's. */
  async listRevisions(
    workspaceId: string,
    agentId: string,
    options: { limit: number; before?: number },
  ): Promise<Page<AgentRevisionRecord> | undefined> {
    const limit = assertLimit(options.limit);
    const before = options.before;
    const scope = this.scope;
    if (!(await this.live(scope, workspaceId, agentId).executeTakeFirst())) return undefined;
    const rows = await scope.db
      .selectFrom('agent_revisions')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('agent_id', '=', agentId)
      .$if(before !== undefined, (q) => q.where('revision', '<', before ?? 0))
      .orderBy('revision', 'desc')
      .limit(limit + 1)
      .execute();
    return toPage(rows, limit, toRevision);
  }

  async getRevision(
    workspaceId: string,
    agentId: string,
    revision: number,
  ): Promise<AgentRevisionRecord | undefined> {
    const row = await this.scope.db
      .selectFrom('agent_revisions')
      .innerJoin('agents', 'agents.id', 'agent_revisions.agent_id')
      .selectAll('agent_revisions')
      .where('agent_revisions.workspace_id', '=', workspaceId)
      .where('agents.workspace_id', '=', workspaceId)
      .where('agents.deleted_at', 'is', null)
      .where('agent_revisions.agent_id', '=', agentId)
      .where('agent_revisions.revision', '=', revision)
      .executeTakeFirst();
    return row ? toRevision(row) : undefined;
  }

  /** The agent's row when it exists in this workspace and is not deleted. */
  private live(scope: Scope, workspaceId: string, id: string) {
    return scope.db
      .selectFrom('agents')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null);
  }
}

function revisionRow(
  agent: AgentsTable,
  reason: RevisionReason,
  restoredFrom: number | null,
): AgentRevisionsTable {
  return {
    workspace_id: agent.workspace_id,
    agent_id: agent.id,
    revision: agent.revision,
    reason,
    restored_from: restoredFrom,
    content: agent.content,
    created_at: agent.updated_at,
  };
}
