import { type ExpressionBuilder, sql } from 'kysely';
import type { Database, PhoneNumbersTable } from '../db.ts';
import { assertLimit, toPage } from '../page.ts';
import type { Scope } from '../scope.ts';
import type {
  NewPhoneNumber,
  NumberCallStats,
  PhoneNumberChange,
  PhoneNumberRecord,
  PhoneNumberRepo,
} from '../telephony-types.ts';
import type { Page } from '../values.ts';

function toRecord(row: PhoneNumbersTable): PhoneNumberRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    number: row.number,
    ownership: row.ownership,
    provider: row.provider,
    providerRef: row.provider_ref,
    state: row.state,
    setupError: row.setup_error,
    agentId: row.agent_id,
    incomingEnabled: Number(row.incoming_enabled) === 1,
    poolId: row.pool_id,
    version: Number(row.version),
    health: row.health,
    restingUntil: row.resting_until === null ? null : Number(row.resting_until),
    rests: (JSON.parse(row.rests) as number[]).map(Number),
    warmingUntil: Number(row.warming_until),
    paidUntil: row.paid_until === null ? null : Number(row.paid_until),
    renewsAt: row.renews_at === null ? null : Number(row.renews_at),
    releasesAt: row.releases_at === null ? null : Number(row.releases_at),
    providerSecret: row.provider_secret,
    previousVoiceUrl: row.previous_voice_url,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

function changeColumns(change: PhoneNumberChange): Partial<PhoneNumbersTable> {
  const columns: Partial<PhoneNumbersTable> = {};
  if (change.state !== undefined) columns.state = change.state;
  if (change.setupError !== undefined) columns.setup_error = change.setupError;
  if (change.agentId !== undefined) columns.agent_id = change.agentId;
  if (change.incomingEnabled !== undefined) columns.incoming_enabled = change.incomingEnabled ? 1 : 0;
  if (change.poolId !== undefined) columns.pool_id = change.poolId;
  if (change.health !== undefined) columns.health = change.health;
  if (change.restingUntil !== undefined) columns.resting_until = change.restingUntil;
  if (change.rests !== undefined) columns.rests = JSON.stringify(change.rests);
  if (change.paidUntil !== undefined) columns.paid_until = change.paidUntil;
  if (change.renewsAt !== undefined) columns.renews_at = change.renewsAt;
  if (change.releasesAt !== undefined) columns.releases_at = change.releasesAt;
  if (change.previousVoiceUrl !== undefined) columns.previous_voice_url = change.previousVoiceUrl;
  return columns;
}

/** Rows the workspace still holds at `now`: not released, and not past the end of a release's paid period. */
const held =
  (now: number) =>
  ({ eb, and, or }: ExpressionBuilder<Database, 'phone_numbers'>) =>
    and([eb('released_at', 'is', null), or([eb('releases_at', 'is', null), eb('releases_at', '>', now)])]);

/** Phone numbers; every query filters by workspace, and released numbers are never returned. */
export class PhoneNumberStore implements PhoneNumberRepo {
  constructor(private readonly scope: Scope) {}

  /** A concurrent insert of the same number loses on the held-number index, never with an error. */
  async insert(record: NewPhoneNumber): Promise<PhoneNumberRecord | 'exists'> {
    const now = this.scope.now;
    const row: PhoneNumbersTable = {
      id: record.id,
      workspace_id: record.workspaceId,
      number: record.number,
      ownership: record.ownership,
      provider: record.provider,
      provider_ref: record.providerRef,
      state: record.state,
      setup_error: record.setupError,
      agent_id: record.agentId,
      incoming_enabled: record.incomingEnabled ? 1 : 0,
      pool_id: record.poolId,
      version: 1,
      health: record.health,
      resting_until: null,
      rests: '[]',
      warming_until: record.warmingUntil,
      paid_until: record.paidUntil,
      renews_at: record.renewsAt,
      releases_at: null,
      released_at: null,
      provider_secret: record.providerSecret ?? null,
      previous_voice_url: record.previousVoiceUrl ?? null,
      created_at: now,
      updated_at: now,
    };
    const result = await this.scope.db
      .insertInto('phone_numbers')
      .values(row)
      .onConflict((oc) => oc.columns(['workspace_id', 'number']).where('released_at', 'is', null).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1 ? toRecord(row) : 'exists';
  }

  async get(workspaceId: string, id: string): Promise<PhoneNumberRecord | undefined> {
    const row = await this.live(this.scope, workspaceId).where('id', '=', id).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async findById(id: string): Promise<PhoneNumberRecord | undefined> {
    const row = await this.scope.db
      .selectFrom('phone_numbers')
      .selectAll()
      .where('id', '=', id)
      .where(held(this.scope.now))
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async list(
    workspaceId: string,
    options: { limit: number; after?: string },
  ): Promise<Page<PhoneNumberRecord>> {
    const limit = assertLimit(options.limit);
    const after = options.after;
    const rows = await this.live(this.scope, workspaceId)
      .$if(after !== undefined, (q) => q.where('id', '<', after ?? ''))
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    return toPage(rows, limit, toRecord);
  }

  async many(workspaceId: string, ids: readonly string[]): Promise<PhoneNumberRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.live(this.scope, workspaceId)
      .where('id', 'in', [...ids])
      .execute();
    return rows.map(toRecord);
  }

  async inPool(workspaceId: string, poolId: string): Promise<PhoneNumberRecord[]> {
    const rows = await this.live(this.scope, workspaceId)
      .where('pool_id', '=', poolId)
      .orderBy('id', 'asc')
      .execute();
    return rows.map(toRecord);
  }

  async held(workspaceId: string): Promise<string[]> {
    const rows = await this.scope.db
      .selectFrom('phone_numbers')
      .select('number')
      .where('workspace_id', '=', workspaceId)
      .where('released_at', 'is', null)
      .execute();
    return rows.map((r) => r.number);
  }

  change(
    workspaceId: string,
    id: string,
    options: { version?: number; change: (current: PhoneNumberRecord) => PhoneNumberChange },
  ): Promise<PhoneNumberRecord | 'not_found' | 'conflict'> {
    return this.scope.transaction(async (scope) => {
      const row = await this.live(scope, workspaceId)
        .where('id', '=', id)
        .$if(scope.isPostgres, (q) => q.forUpdate())
        .executeTakeFirst();
      if (!row) return 'not_found';
      if (options.version !== undefined && options.version !== Number(row.version)) return 'conflict';
      const columns = changeColumns(options.change(toRecord(row)));
      const next: PhoneNumbersTable = {
        ...row,
        ...columns,
        version: Number(row.version) + 1,
        updated_at: scope.now,
      };
      const updated = await scope.db
        .updateTable('phone_numbers')
        .set({ ...columns, version: next.version, updated_at: next.updated_at })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .where('version', '=', row.version)
        .executeTakeFirst();
      if (updated.numUpdatedRows !== 1n) return 'conflict';
      return toRecord(next);
    });
  }

  setPool(workspaceId: string, poolId: string, ids: readonly string[]): Promise<void> {
    return this.scope.transaction(async (scope) => {
      const now = scope.now;
      await scope.db
        .updateTable('phone_numbers')
        .set((eb) => ({ pool_id: null, version: eb('version', '+', 1), updated_at: now }))
        .where('workspace_id', '=', workspaceId)
        .where('pool_id', '=', poolId)
        .$if(ids.length > 0, (q) => q.where('id', 'not in', [...ids]))
        .execute();
      if (ids.length === 0) return;
      await scope.db
        .updateTable('phone_numbers')
        .set((eb) => ({ pool_id: poolId, version: eb('version', '+', 1), updated_at: now }))
        .where('workspace_id', '=', workspaceId)
        .where('id', 'in', [...ids])
        .where((eb) => eb.or([eb('pool_id', 'is', null), eb('pool_id', '!=', poolId)]))
        .execute();
    });
  }

  async callStats(
    workspaceId: string,
    ids: readonly string[],
    since: number,
  ): Promise<Map<string, NumberCallStats>> {
    const stats = new Map<string, NumberCallStats>();
    if (ids.length === 0) return stats;
    const rows = await this.scope.db
      .selectFrom('calls')
      .select((eb) => [
        'phone_number_id',
        eb.fn.countAll<number | string>().as('attempts'),
        eb.fn.count<number | string>('answered_at').as('answers'),
      ])
      .where('workspace_id', '=', workspaceId)
      .where('phone_number_id', 'in', [...ids])
      .where('created_at', '>=', since)
      .groupBy('phone_number_id')
      .execute();
    for (const row of rows) {
      if (row.phone_number_id === null) continue;
      stats.set(row.phone_number_id, { attempts: Number(row.attempts), answers: Number(row.answers) });
    }
    return stats;
  }

  async recentStats(
    workspaceId: string,
    ids: readonly string[],
    last: number,
  ): Promise<Map<string, NumberCallStats>> {
    const stats = new Map<string, NumberCallStats>();
    if (ids.length === 0) return stats;
    const { rows } = await sql<{
      phone_number_id: string;
      attempts: number | string;
      answers: number | string;
    }>`
      select phone_number_id, count(*) as attempts, count(answered_at) as answers
      from (
        select phone_number_id, answered_at,
          row_number() over (partition by phone_number_id order by created_at desc, id desc) as position
        from calls
        where workspace_id = ${workspaceId}
          and phone_number_id in (${sql.join(ids.map((id) => sql`${id}`))})
          and ended_at is not null
      ) recent
      where position <= ${last}
      group by phone_number_id`.execute(this.scope.db);
    for (const row of rows) {
      stats.set(row.phone_number_id, { attempts: Number(row.attempts), answers: Number(row.answers) });
    }
    return stats;
  }

  async dueForRenewal(now: number, limit: number): Promise<PhoneNumberRecord[]> {
    const rows = await this.scope.db
      .selectFrom('phone_numbers')
      .selectAll()
      .where('ownership', '=', 'managed')
      .where('released_at', 'is', null)
      .where('releases_at', 'is', null)
      .where('renews_at', '<=', now)
      .orderBy('renews_at', 'asc')
      .limit(assertLimit(limit))
      .execute();
    return rows.map(toRecord);
  }

  async dueForRelease(now: number, limit: number): Promise<PhoneNumberRecord[]> {
    const rows = await this.scope.db
      .selectFrom('phone_numbers')
      .selectAll()
      .where('released_at', 'is', null)
      .where('releases_at', '<=', now)
      .orderBy('releases_at', 'asc')
      .limit(assertLimit(limit))
      .execute();
    return rows.map(toRecord);
  }

  async markReleased(workspaceId: string, id: string): Promise<boolean> {
    const now = this.scope.now;
    const result = await this.scope.db
      .updateTable('phone_numbers')
      .set((eb) => ({ released_at: now, pool_id: null, version: eb('version', '+', 1), updated_at: now }))
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('released_at', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  private live(scope: Scope, workspaceId: string) {
    return scope.db
      .selectFrom('phone_numbers')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where(held(scope.now));
  }
}
