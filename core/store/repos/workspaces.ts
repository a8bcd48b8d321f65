import { newId } from '../../ids.ts';
import type { WorkspacesTable } from '../db.ts';
import type { Scope } from '../scope.ts';
import type { Workspace, WorkspaceMode, WorkspaceRepo } from '../types.ts';

function toWorkspace(row: WorkspacesTable): Workspace {
  return {
    id: row.id,
    name: row.name,
    mode: row.mode,
    queuedEventsEnabled: row.queued_events_enabled === 1,
    campaignsEnabled: row.campaigns_enabled !== 0,
    createdAt: row.created_at,
  };
}

export class WorkspaceStore implements WorkspaceRepo {
  constructor(private readonly scope: Scope) {}

  /** Creates the workspace and its empty wallet account together. */
  async create(input: { name: string; mode: WorkspaceMode }): Promise<Workspace> {
    const now = this.scope.now;
    const row: WorkspacesTable = {
      id: newId('workspace', now),
      name: input.name,
      mode: input.mode,
      queued_events_enabled: 0,
      campaigns_enabled: 1,
      created_at: now,
    };
    await this.scope.transaction(async ({ db }) => {
      await db.insertInto('workspaces').values(row).execute();
      await db
        .insertInto('wallet_accounts')
        .values({ workspace_id: row.id, balance_paise: 0, held_paise: 0, updated_at: now })
        .execute();
    });
    return toWorkspace(row);
  }

  async get(id: string): Promise<Workspace | undefined> {
    const row = await this.scope.db
      .selectFrom('workspaces')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toWorkspace(row) : undefined;
  }

  async count(): Promise<number> {
    const row = await this.scope.db
      .selectFrom('workspaces')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async setQueuedEvents(id: string, enabled: boolean): Promise<void> {
    await this.scope.db
      .updateTable('workspaces')
      .set({ queued_events_enabled: enabled ? 1 : 0 })
      .where('id', '=', id)
      .execute();
  }

  async setCampaigns(id: string, enabled: boolean): Promise<void> {
    await this.scope.db
      .updateTable('workspaces')
      .set({ campaigns_enabled: enabled ? 1 : 0 })
      .where('id', '=', id)
      .execute();
  }
}
