import type { Updateable } from 'kysely';
import { type CallLatency, storedLatency } from '../call-latency.ts';
import type { CallsTable } from '../db.ts';
import { assertLimit, toPage } from '../page.ts';
import type { Scope } from '../scope.ts';
import {
  type CallChanges,
  type CallListFilter,
  type CallRecord,
  type CallRepo,
  type CallStatus,
  type CallVariables,
  type JsonObject,
  LIVE_CALL_STATUSES,
  type NewCall,
  OPEN_CALL_STATUSES,
  type Page,
} from '../types.ts';

function parseJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

function toCall(row: CallsTable): CallRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    agentId: row.agent_id,
    agentRevision: row.agent_revision,
    channel: row.channel,
    toNumber: row.to_number,
    fromNumber: row.from_number,
    tier: row.tier,
    perMinPaise: row.per_min_paise,
    maxDurationSecs: row.max_duration_secs,
    variables: parseJson<CallVariables>(row.variables) ?? {},
    webhookUrl: row.webhook_url,
    phoneNumberId: row.phone_number_id,
    poolId: row.pool_id,
    campaignId: row.campaign_id,
    direction: row.direction,
    status: row.status,
    endedReason: row.ended_reason,
    carrier: row.carrier,
    carrierCallId: row.carrier_call_id,
    gatewayNode: row.gateway_node,
    createdAt: row.created_at,
    dialingAt: row.dialing_at,
    answeredAt: row.answered_at,
    endedAt: row.ended_at,
    durationSecs: row.duration_secs,
    costPaise: row.cost_paise,
    transcriptAvailable: row.transcript_available === 1,
    recordingAvailable: row.recording_available === 1,
    analysis: parseJson<JsonObject>(row.analysis),
    latency: row.latency === null ? null : storedLatency(JSON.parse(row.latency)),
    error: row.error,
  };
}

/** CallChanges in column names; absent fields stay untouched. */
function columnsOf(changes: CallChanges): Updateable<CallsTable> {
  const columns: Updateable<CallsTable> = {};
  if (changes.fromNumber !== undefined) columns.from_number = changes.fromNumber;
  if (changes.carrier !== undefined) columns.carrier = changes.carrier;
  if (changes.carrierCallId !== undefined) columns.carrier_call_id = changes.carrierCallId;
  if (changes.gatewayNode !== undefined) columns.gateway_node = changes.gatewayNode;
  if (changes.dialingAt !== undefined) columns.dialing_at = changes.dialingAt;
  if (changes.answeredAt !== undefined) columns.answered_at = changes.answeredAt;
  if (changes.endedAt !== undefined) columns.ended_at = changes.endedAt;
  if (changes.endedReason !== undefined) columns.ended_reason = changes.endedReason;
  if (changes.durationSecs !== undefined) columns.duration_secs = changes.durationSecs;
  if (changes.costPaise !== undefined) columns.cost_paise = changes.costPaise;
  if (changes.error !== undefined) columns.error = changes.error;
  if (changes.variables !== undefined) columns.variables = JSON.stringify(changes.variables);
  return columns;
}

/**
 * Calls. Status changes go only through `transition`, one conditional UPDATE (`... WHERE status IN (from)`):
 * when two outcomes race (an abort and a hang-up), the database lets exactly one of them through, and the
 * loser learns it from the empty result. Every query names the workspace.
 */
export class CallStore implements CallRepo {
  constructor(private readonly scope: Scope) {}

  async insert(call: NewCall): Promise<CallRecord> {
    const row: CallsTable = {
      id: call.id,
      workspace_id: call.workspaceId,
      agent_id: call.agentId,
      agent_revision: call.agentRevision,
      channel: call.channel,
      to_number: call.toNumber,
      from_number: call.fromNumber ?? null,
      tier: call.tier,
      per_min_paise: call.perMinPaise,
      max_duration_secs: call.maxDurationSecs,
      variables: JSON.stringify(call.variables),
      webhook_url: call.webhookUrl,
      phone_number_id: call.phoneNumberId ?? null,
      pool_id: call.poolId ?? null,
      campaign_id: call.campaignId ?? null,
      direction: call.direction ?? 'outbound',
      status: 'queued',
      ended_reason: null,
      carrier: null,
      carrier_call_id: null,
      gateway_node: null,
      created_at: this.scope.now,
      dialing_at: null,
      answered_at: null,
      ended_at: null,
      duration_secs: 0,
      cost_paise: 0,
      transcript_available: 0,
      recording_available: 0,
      analysis: null,
      latency: null,
      error: null,
    };
    await this.scope.db.insertInto('calls').values(row).execute();
    return toCall(row);
  }

  async get(workspaceId: string, id: string): Promise<CallRecord | undefined> {
    const row = await this.one(workspaceId, id).executeTakeFirst();
    return row ? toCall(row) : undefined;
  }

  async findById(id: string): Promise<CallRecord | undefined> {
    const row = await this.scope.db.selectFrom('calls').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toCall(row) : undefined;
  }

  async getForUpdate(workspaceId: string, id: string): Promise<CallRecord | undefined> {
    const row = await this.one(workspaceId, id)
      .$if(this.scope.isPostgres, (q) => q.forUpdate())
      .executeTakeFirst();
    return row ? toCall(row) : undefined;
  }

  async list(workspaceId: string, filter: CallListFilter): Promise<Page<CallRecord>> {
    const limit = assertLimit(filter.limit);
    const { after, agentId, campaignId, createdFrom, createdTo } = filter;
    const statuses = filter.status === undefined ? [] : [filter.status].flat();
    const rows = await this.scope.db
      .selectFrom('calls')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .$if(after !== undefined, (q) => q.where('id', '<', after ?? ''))
      .$if(statuses.length > 0, (q) => q.where('status', 'in', statuses))
      .$if(agentId !== undefined, (q) => q.where('agent_id', '=', agentId ?? ''))
      .$if(campaignId !== undefined, (q) => q.where('campaign_id', '=', campaignId ?? ''))
      .$if(createdFrom !== undefined, (q) => q.where('created_at', '>=', createdFrom ?? 0))
      .$if(createdTo !== undefined, (q) => q.where('created_at', '<', createdTo ?? 0))
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    return toPage(rows, limit, toCall);
  }

  countOpen(workspaceId: string): Promise<number> {
    return this.countIn(workspaceId, OPEN_CALL_STATUSES);
  }

  countLive(workspaceId: string): Promise<number> {
    return this.countIn(workspaceId, LIVE_CALL_STATUSES);
  }

  async countLiveAll(): Promise<number> {
    const row = await this.scope.db
      .selectFrom('calls')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', 'in', LIVE_CALL_STATUSES)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async nextQueued(workspaceId: string, limit: number): Promise<CallRecord[]> {
    const rows = await this.scope.db
      .selectFrom('calls')
      .leftJoin('v1_calls', 'v1_calls.call_id', 'calls.id')
      .selectAll('calls')
      .where('calls.workspace_id', '=', workspaceId)
      .where('calls.status', '=', 'queued')
      .where('calls.direction', '=', 'outbound')
      .orderBy((eb) => eb.fn.coalesce('v1_calls.priority', eb.lit(0)), 'desc')
      .orderBy('calls.id', 'asc')
      .limit(assertLimit(limit))
      .execute();
    return rows.map(toCall);
  }

  async workspacesWithQueued(): Promise<string[]> {
    const rows = await this.scope.db
      .selectFrom('calls')
      .select('workspace_id')
      .distinct()
      .where('status', '=', 'queued')
      .where('direction', '=', 'outbound')
      .orderBy('workspace_id')
      .execute();
    return rows.map((r) => r.workspace_id);
  }

  async transition(
    workspaceId: string,
    id: string,
    change: { from: readonly CallStatus[]; to: CallStatus; set?: CallChanges },
  ): Promise<CallRecord | undefined> {
    if (change.from.length === 0) return undefined;
    const row = await this.scope.db
      .updateTable('calls')
      .set({ ...columnsOf(change.set ?? {}), status: change.to })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('status', 'in', change.from)
      .returningAll()
      .executeTakeFirst();
    return row ? toCall(row) : undefined;
  }

  async findByCarrierCall(workspaceId: string, carrierCallId: string): Promise<CallRecord | undefined> {
    const row = await this.scope.db
      .selectFrom('calls')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('carrier_call_id', '=', carrierCallId)
      .orderBy('id', 'desc')
      .executeTakeFirst();
    return row ? toCall(row) : undefined;
  }

  async liveOnNode(gatewayNode: string): Promise<CallRecord[]> {
    const rows = await this.scope.db
      .selectFrom('calls')
      .selectAll()
      .where('gateway_node', '=', gatewayNode)
      .where('status', 'in', LIVE_CALL_STATUSES)
      .orderBy('id')
      .execute();
    return rows.map(toCall);
  }

  async liveOlderThan(ageMs: number): Promise<CallRecord[]> {
    if (!Number.isSafeInteger(ageMs) || ageMs < 0) throw new RangeError('ageMs must be >= 0');
    const rows = await this.scope.db
      .selectFrom('calls')
      .selectAll()
      .where('status', 'in', LIVE_CALL_STATUSES)
      .where('dialing_at', '<=', this.scope.now - ageMs)
      .orderBy('id')
      .execute();
    return rows.map(toCall);
  }

  async setCarrierCall(
    workspaceId: string,
    id: string,
    carrier: { carrier: string; carrierCallId: string },
  ): Promise<boolean> {
    // Conditional on the call being open: an abort that locked the row first (and so saw no carrier id to hang
    // up) makes this write nothing, and the dialer hangs up itself; one that comes after sees the id.
    const result = await this.scope.db
      .updateTable('calls')
      .set({ carrier: carrier.carrier, carrier_call_id: carrier.carrierCallId })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('status', 'in', OPEN_CALL_STATUSES)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  setArtifacts(
    workspaceId: string,
    id: string,
    artifacts: { transcriptAvailable?: boolean; recordingAvailable?: boolean },
  ): Promise<boolean> {
    const columns: Updateable<CallsTable> = {};
    if (artifacts.transcriptAvailable !== undefined)
      columns.transcript_available = artifacts.transcriptAvailable ? 1 : 0;
    if (artifacts.recordingAvailable !== undefined)
      columns.recording_available = artifacts.recordingAvailable ? 1 : 0;
    return this.update(workspaceId, id, columns);
  }

  setAnalysis(workspaceId: string, id: string, analysis: JsonObject): Promise<boolean> {
    return this.update(workspaceId, id, { analysis: JSON.stringify(analysis) });
  }

  setLatency(workspaceId: string, id: string, latency: CallLatency): Promise<boolean> {
    return this.update(workspaceId, id, { latency: JSON.stringify(latency) });
  }

  private one(workspaceId: string, id: string) {
    return this.scope.db
      .selectFrom('calls')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id);
  }

  private async countIn(workspaceId: string, statuses: readonly CallStatus[]): Promise<number> {
    const row = await this.scope.db
      .selectFrom('calls')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where('status', 'in', statuses)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  private async update(workspaceId: string, id: string, columns: Updateable<CallsTable>): Promise<boolean> {
    if (Object.keys(columns).length === 0) return (await this.get(workspaceId, id)) !== undefined;
    const result = await this.scope.db
      .updateTable('calls')
      .set(columns)
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
}
