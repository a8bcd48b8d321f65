import { newId } from '../../ids.ts';
import type { PhonePoolsTable } from '../db.ts';
import { assertLimit, toPage } from '../page.ts';
import type { Scope } from '../scope.ts';
import type { PhonePoolChange, PhonePoolRecord, PhonePoolRepo } from '../telephony-types.ts';
import type { Page } from '../values.ts';

const toRecord = (row: PhonePoolsTable): PhonePoolRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  name: row.name,
  purpose: row.purpose,
  maxPerHour: row.max_per_hour === null ? null : Number(row.max_per_hour),
  defaultForCampaigns: Number(row.default_for_campaigns) === 1,
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
});

/** Phone pools; membership lives on the numbers (`phone_numbers.pool_id`). */
export class PhonePoolStore implements PhonePoolRepo {
  constructor(private readonly scope: Scope) {}

  async create(
    workspaceId: string,
    input: Pick<PhonePoolRecord, 'name' | 'purpose' | 'maxPerHour' | 'defaultForCampaigns'>,
  ): Promise<PhonePoolRecord> {
    const now = this.scope.now;
    const row: PhonePoolsTable = {
      id: newId('pool', now),
      workspace_id: workspaceId,
      name: input.name,
      purpose: input.purpose,
      max_per_hour: input.maxPerHour,
      default_for_campaigns: input.defaultForCampaigns ? 1 : 0,
      created_at: now,
      updated_at: now,
    };
    await this.scope.db.insertInto('phone_pools').values(row).execute();
    return toRecord(row);
  }

  async get(workspaceId: string, id: string): Promise<PhonePoolRecord | undefined> {
    const row = await this.scope.db
      .selectFrom('phone_pools')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async list(
    workspaceId: string,
    options: { limit: number; after?: string },
  ): Promise<Page<PhonePoolRecord>> {
    const limit = assertLimit(options.limit);
    const after = options.after;
    const rows = await this.scope.db
      .selectFrom('phone_pools')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .$if(after !== undefined, (q) => q.where('id', '<', after ?? ''))
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    return toPage(rows, limit, toRecord);
  }

  async update(
    workspaceId: string,
    id: string,
    change: PhonePoolChange,
  ): Promise<PhonePoolRecord | undefined> {
    const columns: Partial<PhonePoolsTable> = { updated_at: this.scope.now };
    if (change.name !== undefined) columns.name = change.name;
    if (change.purpose !== undefined) columns.purpose = change.purpose;
    if (change.maxPerHour !== undefined) columns.max_per_hour = change.maxPerHour;
    if (change.defaultForCampaigns !== undefined)
      columns.default_for_campaigns = change.defaultForCampaigns ? 1 : 0;
    const result = await this.scope.db
      .updateTable('phone_pools')
      .set(columns)
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (result.numUpdatedRows !== 1n) return undefined;
    return this.get(workspaceId, id);
  }

  async clearDefault(workspaceId: string, exceptId: string): Promise<void> {
    await this.scope.db
      .updateTable('phone_pools')
      .set({ default_for_campaigns: 0, updated_at: this.scope.now })
      .where('workspace_id', '=', workspaceId)
      .where('id', '!=', exceptId)
      .where('default_for_campaigns', '=', 1)
      .execute();
  }

  async campaignDefault(workspaceId: string): Promise<PhonePoolRecord | undefined> {
    const row = await this.scope.db
      .selectFrom('phone_pools')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('default_for_campaigns', '=', 1)
      .orderBy('id', 'asc')
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async remove(workspaceId: string, id: string): Promise<boolean> {
    const result = await this.scope.db
      .deleteFrom('phone_pools')
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}
