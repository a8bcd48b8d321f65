import {
  CAMPAIGN_STATUSES,
  type CampaignSettings,
  type CampaignStatus,
  CONTACT_STATUSES,
  type ContactStatus,
  campaignSettingsOf,
  PAUSE_REASONS,
  type PauseReason,
} from '../../campaigns/settings.ts';
import { newId } from '../../ids.ts';
import { OPEN_CALL_STATUSES } from '../call-types.ts';
import type {
  ActiveCampaign,
  CampaignRecord,
  CampaignRepo,
  ContactRecord,
  ContactsRefusal,
  ContactTally,
  DialState,
  NewContact,
} from '../campaign-types.ts';
import type { CampaignContactsTable, CampaignsTable } from '../db.ts';
import { assertLimit, toPage } from '../page.ts';
import type { Executor, Scope } from '../scope.ts';
import type { Page } from '../values.ts';

/** Rows per INSERT: far below SQLite's bound on parameters in one statement (12 a row). */
const INSERT_CHUNK = 500;
/** Contacts of an upload in progress: written, not yet callable, never shown. */
const UPLOADING = 'uploading';

const oneOf = <T extends string>(values: readonly T[], value: string, fallback: T): T =>
  (values as readonly string[]).includes(value) ? (value as T) : fallback;

const toCampaign = (row: CampaignsTable): CampaignRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  settings: campaignSettingsOf(row.settings),
  status: oneOf(CAMPAIGN_STATUSES, row.status, 'paused'),
  pauseReason: row.pause_reason === null ? null : oneOf(PAUSE_REASONS, row.pause_reason, 'requested'),
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
});

const toContact = (row: CampaignContactsTable): ContactRecord => ({
  id: row.id,
  campaignId: row.campaign_id,
  to: row.to_number,
  variables: JSON.parse(row.variables) as ContactRecord['variables'],
  status: oneOf(CONTACT_STATUSES, row.status, 'pending'),
  attempts: row.attempts,
  callIds: JSON.parse(row.call_ids) as string[],
  nextAttemptAt: row.next_attempt_at === null ? null : Number(row.next_attempt_at),
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
});

/** Campaigns and their contacts. Deleted campaigns stay in the table but are never returned. */
export class CampaignStore implements CampaignRepo {
  constructor(private readonly scope: Scope) {}

  async create(workspaceId: string, settings: CampaignSettings): Promise<CampaignRecord> {
    const now = this.scope.now;
    const row: CampaignsTable = {
      id: newId('campaign', now),
      workspace_id: workspaceId,
      settings: JSON.stringify(settings),
      status: 'paused',
      pause_reason: 'not_started',
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    await this.scope.db.insertInto('campaigns').values(row).execute();
    return toCampaign(row);
  }

  async get(workspaceId: string, id: string): Promise<CampaignRecord | undefined> {
    const row = await live(this.scope.db, workspaceId, id).selectAll().executeTakeFirst();
    return row ? toCampaign(row) : undefined;
  }

  async list(
    workspaceId: string,
    options: { limit: number; after?: string; status?: CampaignStatus },
  ): Promise<Page<CampaignRecord>> {
    const limit = assertLimit(options.limit);
    const { after, status } = options;
    const rows = await this.scope.db
      .selectFrom('campaigns')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('deleted_at', 'is', null)
      .$if(status !== undefined, (q) => q.where('status', '=', status ?? ''))
      .$if(after !== undefined, (q) => q.where('id', '<', after ?? ''))
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    return toPage(rows, limit, toCampaign);
  }

  update(
    workspaceId: string,
    id: string,
    settings: CampaignSettings,
  ): Promise<CampaignRecord | 'running' | undefined> {
    return this.scope.transaction(async (tx) => {
      const { db, now } = tx;
      const row = await lockLive(tx, workspaceId, id);
      if (!row) return undefined;
      if (row.status === 'play') return 'running';
      const updated = { ...row, settings: JSON.stringify(settings), updated_at: now };
      await db
        .updateTable('campaigns')
        .set({ settings: updated.settings, updated_at: now })
        .where('id', '=', id)
        .execute();
      return toCampaign(updated);
    });
  }

  remove(workspaceId: string, id: string): Promise<'deleted' | 'running' | undefined> {
    return this.scope.transaction(async (tx) => {
      const { db, now } = tx;
      const row = await lockLive(tx, workspaceId, id);
      if (!row) return undefined;
      if (row.status === 'play') return 'running';
      await db.updateTable('campaigns').set({ deleted_at: now }).where('id', '=', id).execute();
      return 'deleted';
    });
  }

  transition(
    workspaceId: string,
    id: string,
    from: readonly CampaignStatus[],
    to: CampaignStatus,
    pauseReason: PauseReason | null,
  ): Promise<CampaignRecord | 'conflict' | undefined> {
    return this.scope.transaction(async (tx) => {
      const { db, now } = tx;
      const row = await lockLive(tx, workspaceId, id);
      if (!row) return undefined;
      if (!(from as readonly string[]).includes(row.status)) return 'conflict';
      await db
        .updateTable('campaigns')
        .set({ status: to, pause_reason: pauseReason, updated_at: now })
        .where('id', '=', id)
        .execute();
      return toCampaign({ ...row, status: to, pause_reason: pauseReason, updated_at: now });
    });
  }

  async usingPool(workspaceId: string, poolId: string): Promise<string[]> {
    const rows = await this.scope.db
      .selectFrom('campaigns')
      .select(['id', 'settings'])
      .where('workspace_id', '=', workspaceId)
      .where('deleted_at', 'is', null)
      .where('status', 'not in', ['stopped', 'completed'])
      .orderBy('id', 'asc')
      .execute();
    return rows.filter((row) => campaignSettingsOf(row.settings).pool_id === poolId).map((row) => row.id);
  }

  async tally(campaignId: string): Promise<ContactTally> {
    const rows = await this.scope.db
      .selectFrom('campaign_contacts')
      .select((eb) => ['status', eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('attempts').as('tried')])
      .where('campaign_id', '=', campaignId)
      .groupBy('status')
      .execute();
    const byStatus = Object.fromEntries(CONTACT_STATUSES.map((s) => [s, 0])) as Record<ContactStatus, number>;
    let attempts = 0;
    for (const row of rows) {
      if (row.status === UPLOADING) continue;
      const status = oneOf(CONTACT_STATUSES, row.status, 'pending');
      byStatus[status] += Number(row.n);
      attempts += Number(row.tried ?? 0);
    }
    const [spentPaise, open] = await Promise.all([this.spentPaise(campaignId), this.openCalls(campaignId)]);
    return { byStatus, attempts, spentPaise, ...open };
  }

  async spentPaise(campaignId: string): Promise<number> {
    const row = await this.scope.db
      .selectFrom('calls')
      .select((eb) => eb.fn.sum<number>('cost_paise').as('paise'))
      .where('campaign_id', '=', campaignId)
      .where('status', 'not in', OPEN_CALL_STATUSES)
      .executeTakeFirst();
    return Number(row?.paise ?? 0);
  }

  async dialState(campaignId: string): Promise<DialState> {
    const { db } = this.scope;
    const first = (statuses: readonly string[] | undefined) =>
      db
        .selectFrom('campaign_contacts')
        .select('id')
        .where('campaign_id', '=', campaignId)
        .$if(statuses !== undefined, (q) => q.where('status', 'in', statuses ?? []))
        .$if(statuses === undefined, (q) => q.where('status', '!=', UPLOADING))
        .limit(1)
        .executeTakeFirst();
    const [any, unfinished, open] = await Promise.all([
      first(undefined),
      first(['pending', 'calling']),
      this.openCalls(campaignId),
    ]);
    return { hasContacts: any !== undefined, unfinished: unfinished !== undefined, ...open };
  }

  /** The campaign's open calls and the holds the wallet keeps for them. */
  private async openCalls(campaignId: string): Promise<{ heldPaise: number; openCalls: number }> {
    const held = await this.scope.db
      .selectFrom('calls')
      .innerJoin('wallet_holds', (join) =>
        join
          .onRef('wallet_holds.reference', '=', 'calls.id')
          .onRef('wallet_holds.workspace_id', '=', 'calls.workspace_id'),
      )
      .select((eb) => [
        eb.fn.sum<number>('wallet_holds.amount_paise').as('paise'),
        eb.fn.countAll<number>().as('n'),
      ])
      .where('calls.campaign_id', '=', campaignId)
      .where('calls.status', 'in', OPEN_CALL_STATUSES)
      .executeTakeFirst();
    return { heldPaise: Number(held?.paise ?? 0), openCalls: Number(held?.n ?? 0) };
  }

  async active(): Promise<ActiveCampaign[]> {
    const { db } = this.scope;
    const rows = await db
      .selectFrom('campaigns')
      .select(['id', 'workspace_id'])
      .where('deleted_at', 'is', null)
      .where((eb) =>
        eb.or([
          eb('status', '=', 'play'),
          eb.exists(
            eb
              .selectFrom('campaign_contacts')
              .select('campaign_contacts.id')
              .whereRef('campaign_contacts.campaign_id', '=', 'campaigns.id')
              .where('campaign_contacts.status', '=', 'calling'),
          ),
        ]),
      )
      .orderBy('id', 'asc')
      .execute();
    return rows.map((row) => ({ id: row.id, workspaceId: row.workspace_id }));
  }

  async dueContacts(campaignId: string, now: number, limit: number): Promise<ContactRecord[]> {
    const rows = await this.scope.db
      .selectFrom('campaign_contacts')
      .selectAll()
      .where('campaign_id', '=', campaignId)
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', now)]))
      .orderBy('id', 'asc')
      .limit(limit)
      .execute();
    return rows.map(toContact);
  }

  async callingContacts(campaignId: string): Promise<ContactRecord[]> {
    const rows = await this.scope.db
      .selectFrom('campaign_contacts')
      .selectAll()
      .where('campaign_id', '=', campaignId)
      .where('status', '=', 'calling')
      .orderBy('id', 'asc')
      .execute();
    return rows.map(toContact);
  }

  async claimContact(contactId: string, callId: string): Promise<boolean> {
    const { db, now } = this.scope;
    const row = await db
      .selectFrom('campaign_contacts')
      .select(['call_ids', 'status'])
      .where('id', '=', contactId)
      .$if(this.scope.isPostgres, (q) => q.forUpdate())
      .executeTakeFirst();
    if (row?.status !== 'pending') return false;
    const callIds = [...(JSON.parse(row.call_ids) as string[]), callId];
    const result = await db
      .updateTable('campaign_contacts')
      .set((eb) => ({
        status: 'calling',
        attempts: eb('attempts', '+', 1),
        call_ids: JSON.stringify(callIds),
        next_attempt_at: null,
        updated_at: now,
      }))
      .where('id', '=', contactId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async settleContact(
    contactId: string,
    from: ContactStatus,
    to: ContactStatus,
    nextAttemptAt: number | null,
  ): Promise<boolean> {
    const result = await this.scope.db
      .updateTable('campaign_contacts')
      .set({ status: to, next_attempt_at: nextAttemptAt, updated_at: this.scope.now })
      .where('id', '=', contactId)
      .where('status', '=', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  addContacts(
    workspaceId: string,
    campaignId: string,
    contacts: readonly NewContact[],
    uploadId?: string,
  ): Promise<{ accepted: number; duplicates: number } | ContactsRefusal> {
    return this.scope.transaction(async (tx) => {
      const { db, now } = tx;
      const refusal = await openForContacts(tx, workspaceId, campaignId);
      if (refusal) return refusal;
      const distinct = new Map<string, NewContact>();
      for (const contact of contacts) if (!distinct.has(contact.to)) distinct.set(contact.to, contact);
      const unique = [...distinct.values()];
      let accepted = 0;
      for (let start = 0; start < unique.length; start += INSERT_CHUNK) {
        const rows: CampaignContactsTable[] = unique.slice(start, start + INSERT_CHUNK).map((c) => ({
          id: newId('contact', now),
          campaign_id: campaignId,
          workspace_id: workspaceId,
          to_number: c.to,
          variables: JSON.stringify(c.variables),
          status: uploadId ? UPLOADING : 'pending',
          attempts: 0,
          call_ids: '[]',
          next_attempt_at: null,
          upload_id: uploadId ?? null,
          created_at: now,
          updated_at: now,
        }));
        const inserted = await db
          .insertInto('campaign_contacts')
          .values(rows)
          .onConflict((oc) => oc.columns(['campaign_id', 'to_number']).doNothing())
          .returning('id')
          .execute();
        accepted += inserted.length;
      }
      await db.updateTable('campaigns').set({ updated_at: now }).where('id', '=', campaignId).execute();
      return { accepted, duplicates: contacts.length - accepted };
    });
  }

  commitUpload(workspaceId: string, campaignId: string, uploadId: string): Promise<true | ContactsRefusal> {
    return this.scope.transaction(async (tx) => {
      const { db, now } = tx;
      const refusal = await openForContacts(tx, workspaceId, campaignId);
      if (refusal) return refusal;
      await db
        .updateTable('campaign_contacts')
        .set({ status: 'pending', upload_id: null, updated_at: now })
        .where('campaign_id', '=', campaignId)
        .where('upload_id', '=', uploadId)
        .execute();
      return true;
    });
  }

  async discardUpload(campaignId: string, uploadId: string): Promise<void> {
    await this.scope.db
      .deleteFrom('campaign_contacts')
      .where('campaign_id', '=', campaignId)
      .where('upload_id', '=', uploadId)
      .execute();
  }

  async listContacts(
    workspaceId: string,
    campaignId: string,
    options: { limit: number; after?: string; status?: ContactStatus },
  ): Promise<Page<ContactRecord>> {
    const limit = assertLimit(options.limit);
    const { after, status } = options;
    const rows = await this.scope.db
      .selectFrom('campaign_contacts')
      .selectAll()
      .where('campaign_id', '=', campaignId)
      .where('workspace_id', '=', workspaceId)
      .where('status', status === undefined ? '!=' : '=', status ?? UPLOADING)
      .$if(after !== undefined, (q) => q.where('id', '>', after ?? ''))
      .orderBy('id', 'asc')
      .limit(limit + 1)
      .execute();
    return toPage(rows, limit, toContact);
  }
}

function live(db: Executor, workspaceId: string, id: string) {
  return db
    .selectFrom('campaigns')
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .where('deleted_at', 'is', null);
}

/** The campaign row, locked for the rest of the transaction on PostgreSQL (SQLite has one writer anyway). */
function lockLive(scope: Scope, workspaceId: string, id: string): Promise<CampaignsTable | undefined> {
  return live(scope.db, workspaceId, id)
    .selectAll()
    .$if(scope.isPostgres, (q) => q.forUpdate())
    .executeTakeFirst();
}

async function openForContacts(
  scope: Scope,
  workspaceId: string,
  campaignId: string,
): Promise<ContactsRefusal | undefined> {
  const row = await lockLive(scope, workspaceId, campaignId);
  if (!row) return 'missing';
  if (row.status === 'stopped' || row.status === 'completed') return 'closed';
  return undefined;
}
