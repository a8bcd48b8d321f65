import type { ToolSecretsTable } from '../db.ts';
import { assertLimit, toPage } from '../page.ts';
import type { Scope } from '../scope.ts';
import type { ToolSecretRecord, ToolSecretRepo } from '../tool-types.ts';
import type { Page } from '../types.ts';

const toRecord = (row: ToolSecretsTable): ToolSecretRecord => ({
  workspaceId: row.workspace_id,
  name: row.name,
  sealed: row.sealed,
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
});

/** Tool secrets, sealed by the caller (core/secrets): this repository never sees a clear value. */
export class ToolSecretStore implements ToolSecretRepo {
  constructor(private readonly scope: Scope) {}

  create(
    workspaceId: string,
    name: string,
    sealed: string,
    max: number,
  ): Promise<ToolSecretRecord | 'exists' | 'full'> {
    return this.scope.transaction(async ({ db, now }) => {
      const rows = await db
        .selectFrom('tool_secrets')
        .select('name')
        .where('workspace_id', '=', workspaceId)
        .execute();
      if (rows.some((r) => r.name === name)) return 'exists';
      if (rows.length >= max) return 'full';
      const row: ToolSecretsTable = {
        workspace_id: workspaceId,
        name,
        sealed,
        created_at: now,
        updated_at: now,
      };
      await db.insertInto('tool_secrets').values(row).execute();
      return toRecord(row);
    });
  }

  async get(workspaceId: string, name: string): Promise<ToolSecretRecord | undefined> {
    const row = await this.scope.db
      .selectFrom('tool_secrets')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('name', '=', name)
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async list(
    workspaceId: string,
    options: { limit: number; after?: string },
  ): Promise<Page<ToolSecretRecord>> {
    const limit = assertLimit(options.limit);
    const after = options.after;
    const rows = await this.scope.db
      .selectFrom('tool_secrets')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .$if(after !== undefined, (q) => q.where('name', '>', after ?? ''))
      .orderBy('name', 'asc')
      .limit(limit + 1)
      .execute();
    return toPage(rows, limit, toRecord);
  }

  async names(workspaceId: string): Promise<string[]> {
    const rows = await this.scope.db
      .selectFrom('tool_secrets')
      .select('name')
      .where('workspace_id', '=', workspaceId)
      .orderBy('name', 'asc')
      .execute();
    return rows.map((r) => r.name);
  }

  async many(workspaceId: string, names: readonly string[]): Promise<ToolSecretRecord[]> {
    if (names.length === 0) return [];
    const rows = await this.scope.db
      .selectFrom('tool_secrets')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('name', 'in', [...names])
      .execute();
    return rows.map(toRecord);
  }

  async replace(workspaceId: string, name: string, sealed: string): Promise<ToolSecretRecord | undefined> {
    return this.scope.transaction(async ({ db, now }) => {
      const result = await db
        .updateTable('tool_secrets')
        .set({ sealed, updated_at: now })
        .where('workspace_id', '=', workspaceId)
        .where('name', '=', name)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return undefined;
      return this.get(workspaceId, name);
    });
  }

  async remove(workspaceId: string, name: string): Promise<boolean> {
    const result = await this.scope.db
      .deleteFrom('tool_secrets')
      .where('workspace_id', '=', workspaceId)
      .where('name', '=', name)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
