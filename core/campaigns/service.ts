import { LIVE_TIERS } from '../calls/admission.ts';
import { type VariableValue, variablesProblem } from '../calls/variables.ts';
import { type Clock, systemClock } from '../clock.ts';
import { ApiError, notFound } from '../errors.ts';
import type { AnnounceEvents } from '../events/announce.ts';
import type { CampaignRecord, ContactsRefusal, NewContact, Repositories, Store } from '../store/types.ts';
import { listableNumber } from './dnc.ts';
import { type CampaignEventType, campaignEvent } from './events.ts';
import { type CampaignObject, type ContactObject, campaignObject, contactObject } from './representation.ts';
import {
  CAMPAIGN_LIMITS,
  type CampaignSettings,
  type CampaignStatus,
  type ContactStatus,
  type PauseReason,
} from './settings.ts';

/** What the API gives to create a campaign (validated by its schema; defaults filled here). */
export interface CampaignInput {
  name: string;
  agent_id: string;
  pool_id?: string | undefined;
  tier?: 't1' | 't3' | 't5' | undefined;
  timezone: string;
  slots: CampaignSettings['slots'];
  max_concurrent?: number | undefined;
  retry_count?: number | undefined;
  re_attempt_period_secs?: number | undefined;
  budget_paise?: number | undefined;
  webhook_url?: string | undefined;
  variables?: CampaignSettings['variables'] | undefined;
}

/** A `PATCH`: any setting; `null` clears `pool_id`, `budget_paise` and `webhook_url`. */
export type CampaignPatch = {
  [K in keyof CampaignInput]?: K extends 'pool_id' | 'budget_paise' | 'webhook_url'
    ? CampaignInput[K] | null
    : CampaignInput[K];
};

export interface ContactRejection {
  /** 1-based position in the request (CSV: data row, the header not counted). */
  row: number;
  message: string;
}

export interface ContactsReport {
  accepted: number;
  duplicates: number;
  rejected: ContactRejection[];
}

/** At most this many rejections are listed in one answer; the count says how many there were. */
const REJECTIONS_SHOWN = 1_000;

/**
 * Campaigns: one agent calling a list of contacts. This module owns their settings, contacts and transitions;
 * the dialler (worker role) calls them.
 */
export class CampaignService {
  private readonly announce: AnnounceEvents;
  private readonly clock: Clock;

  constructor(
    private readonly store: Store,
    private readonly options: {
      announce?: AnnounceEvents;
      clock?: Clock;
      /** How many media gateways can take calls now; starting needs one. Absent: not checked. */
      fleetSize?: () => Promise<number>;
      /** Tells the diallers that a campaign plays again. */
      wakeDiallers?: () => void;
    } = {},
  ) {
    this.announce = options.announce ?? (() => {});
    this.clock = options.clock ?? systemClock;
  }

  async create(workspaceId: string, input: CampaignInput): Promise<CampaignObject> {
    const settings = await this.checked(workspaceId, {
      name: input.name,
      agent_id: input.agent_id,
      pool_id: input.pool_id ?? null,
      tier: input.tier ?? 't3',
      timezone: input.timezone,
      slots: input.slots,
      max_concurrent: input.max_concurrent ?? CAMPAIGN_LIMITS.maxConcurrent.default,
      retry_count: input.retry_count ?? CAMPAIGN_LIMITS.retryCount.default,
      re_attempt_period_secs: input.re_attempt_period_secs ?? CAMPAIGN_LIMITS.reAttemptPeriodSecs.default,
      budget_paise: input.budget_paise ?? null,
      webhook_url: input.webhook_url ?? null,
      variables: input.variables ?? {},
    });
    return this.present(await this.store.campaigns.create(workspaceId, settings));
  }

  async get(workspaceId: string, id: string): Promise<CampaignObject> {
    return this.present(await this.record(workspaceId, id));
  }

  async list(workspaceId: string, options: { limit: number; after?: string; status?: CampaignStatus }) {
    const page = await this.store.campaigns.list(workspaceId, options);
    return { items: await Promise.all(page.items.map((r) => this.present(r))), hasMore: page.hasMore };
  }

  async update(workspaceId: string, id: string, patch: CampaignPatch): Promise<CampaignObject> {
    const current = await this.record(workspaceId, id);
    refuseWhileRunning(current);
    const merged = { ...current.settings } as Record<string, unknown>;
    for (const [key, value] of Object.entries(patch)) if (value !== undefined) merged[key] = value;
    const settings = await this.checked(workspaceId, merged as unknown as CampaignSettings);
    const updated = await this.store.campaigns.update(workspaceId, id, settings);
    if (updated === undefined) throw notFound(`campaign ${id}`);
    if (updated === 'running') refuseWhileRunning({ status: 'play' });
    return this.present(updated as CampaignRecord);
  }

  async remove(workspaceId: string, id: string): Promise<void> {
    const removed = await this.store.campaigns.remove(workspaceId, id);
    if (removed === undefined) throw notFound(`campaign ${id}`);
    if (removed === 'running') refuseWhileRunning({ status: 'play' });
  }

  /** For good: `stopped`, from `play` or `paused`; one `campaign.stopped` event. */
  stop(workspaceId: string, id: string): Promise<CampaignObject> {
    return this.transition(workspaceId, id, ['play', 'paused'], 'stopped', null, 'campaign.stopped');
  }

  /** By its owner: `paused` with `pause_reason: "requested"`, from `play`; one `campaign.paused` event. */
  pause(workspaceId: string, id: string): Promise<CampaignObject> {
    return this.transition(workspaceId, id, ['play'], 'paused', 'requested', 'campaign.paused');
  }

  /**
   * To `play` from `paused`, whatever paused it: `campaign.started` the first time, `campaign.resumed` after.
   * `409 conflict` unless paused; `503 fleet_offline` (Retry-After 300 s, campaign unchanged) while no media
   * gateway can take calls.
   */
  async start(workspaceId: string, id: string): Promise<CampaignObject> {
    const current = await this.record(workspaceId, id);
    if (current.status !== 'paused') {
      throw new ApiError('conflict', `campaign ${id} is ${current.status}; only a paused campaign starts`);
    }
    await this.requireFleet();
    const type = current.pauseReason === 'not_started' ? 'campaign.started' : 'campaign.resumed';
    const started = await this.transition(workspaceId, id, ['paused'], 'play', null, type);
    this.options.wakeDiallers?.();
    return started;
  }

  /**
   * To `play` from a pause its owner asked for, while the dialler stands by for it. A campaign that paused by
   * itself (wallet, budget) or never started has no dialler standing by: `409 conflict`; `start` resumes it.
   */
  async resume(workspaceId: string, id: string): Promise<CampaignObject> {
    const current = await this.record(workspaceId, id);
    if (current.status !== 'paused' || current.pauseReason !== 'requested') {
      const state =
        current.status === 'paused' ? `paused (${current.pauseReason ?? 'unknown'})` : current.status;
      throw new ApiError(
        'conflict',
        `campaign ${id} is ${state}: no dialler stands by to resume it; POST /v2/campaigns/${id}/start starts it again`,
      );
    }
    await this.requireFleet();
    const resumed = await this.transition(workspaceId, id, ['paused'], 'play', null, 'campaign.resumed');
    this.options.wakeDiallers?.();
    return resumed;
  }

  /**
   * The dialler's own transitions: a pause for want of money (`insufficient_balance`, `budget_exhausted`) or
   * `completed`. Undefined when the campaign no longer plays (its owner paused or stopped it meanwhile).
   */
  async settleBySelf(
    workspaceId: string,
    id: string,
    to: { status: 'paused'; reason: 'insufficient_balance' | 'budget_exhausted' } | { status: 'completed' },
  ): Promise<CampaignObject | undefined> {
    try {
      return to.status === 'paused'
        ? await this.transition(workspaceId, id, ['play'], 'paused', to.reason, 'campaign.paused')
        : await this.transition(workspaceId, id, ['play'], 'completed', null, 'campaign.completed');
    } catch (error) {
      if (error instanceof ApiError && error.code === 'conflict') return undefined;
      throw error;
    }
  }

  private async requireFleet(): Promise<void> {
    const { fleetSize } = this.options;
    if (fleetSize && (await fleetSize()) === 0) {
      throw new ApiError(
        'fleet_offline',
        'no media gateway is up to take calls; the campaign is unchanged and nothing was charged',
        { retryAfterSecs: 300 },
      );
    }
  }

  async addContacts(workspaceId: string, id: string, rows: readonly RawContact[]): Promise<ContactsReport> {
    const { valid, rejected } = checkContacts(rows, 1);
    const counts = unlessRefused(await this.store.campaigns.addContacts(workspaceId, id, valid), id);
    return {
      accepted: counts.accepted,
      duplicates: counts.duplicates,
      rejected: rejected.slice(0, REJECTIONS_SHOWN),
    };
  }

  /**
   * Adds contacts arriving in batches (a CSV upload): each batch is written as it comes, held back under one
   * upload id, and made callable in one statement at the end; on any failure the upload's rows are removed.
   */
  async addContactBatches(
    workspaceId: string,
    id: string,
    batches: AsyncIterable<readonly RawContact[]>,
    uploadId: string,
  ): Promise<ContactsReport> {
    const report: ContactsReport = { accepted: 0, duplicates: 0, rejected: [] };
    let row = 1;
    try {
      for await (const batch of batches) {
        const { valid, rejected } = checkContacts(batch, row);
        row += batch.length;
        if (report.rejected.length < REJECTIONS_SHOWN) report.rejected.push(...rejected);
        const counts = unlessRefused(
          await this.store.campaigns.addContacts(workspaceId, id, valid, uploadId),
          id,
        );
        report.accepted += counts.accepted;
        report.duplicates += counts.duplicates;
      }
      unlessRefused(await this.store.campaigns.commitUpload(workspaceId, id, uploadId), id);
    } catch (error) {
      await this.store.campaigns.discardUpload(id, uploadId);
      throw error;
    }
    report.rejected = report.rejected.slice(0, REJECTIONS_SHOWN);
    return report;
  }

  async listContacts(
    workspaceId: string,
    id: string,
    options: { limit: number; after?: string; status?: ContactStatus },
  ): Promise<{ items: ContactObject[]; hasMore: boolean }> {
    await this.record(workspaceId, id);
    const page = await this.store.campaigns.listContacts(workspaceId, id, options);
    return { items: page.items.map(contactObject), hasMore: page.hasMore };
  }

  private async transition(
    workspaceId: string,
    id: string,
    from: readonly CampaignStatus[],
    to: CampaignStatus,
    pauseReason: PauseReason | null,
    type: CampaignEventType,
  ): Promise<CampaignObject> {
    const sandbox = await this.isSandbox(workspaceId);
    const object = await this.store.transaction(async (repos) => {
      const moved = await repos.campaigns.transition(workspaceId, id, from, to, pauseReason);
      if (moved === undefined) throw notFound(`campaign ${id}`);
      if (moved === 'conflict') {
        const current = await repos.campaigns.get(workspaceId, id);
        throw new ApiError(
          'conflict',
          `campaign ${id} is ${current?.status ?? 'gone'}; it cannot be ${to} from there`,
        );
      }
      const campaign = await presentIn(repos, moved, sandbox, this.clock.now());
      await repos.events.append(campaignEvent({ workspaceId, type, campaign, now: moved.updatedAt }));
      return campaign;
    });
    if (object.webhook_url) this.announce();
    return object;
  }

  private async record(workspaceId: string, id: string): Promise<CampaignRecord> {
    const record = await this.store.campaigns.get(workspaceId, id);
    if (!record) throw notFound(`campaign ${id}`);
    return record;
  }

  private async present(record: CampaignRecord): Promise<CampaignObject> {
    return presentIn(this.store, record, await this.isSandbox(record.workspaceId), this.clock.now());
  }

  private async isSandbox(workspaceId: string): Promise<boolean> {
    return (await this.store.workspaces.get(workspaceId))?.mode === 'sandbox';
  }

  /** The settings as a whole: the agent and pool exist in the workspace, the tier can be dialled. */
  private async checked(workspaceId: string, settings: CampaignSettings): Promise<CampaignSettings> {
    const agent = await this.store.agents.get(workspaceId, settings.agent_id);
    if (!agent) throw notFound(`agent ${settings.agent_id}`);
    if (settings.pool_id !== null && !(await this.store.phonePools.get(workspaceId, settings.pool_id))) {
      throw notFound(`phone pool ${settings.pool_id}`);
    }
    if (!(await this.isSandbox(workspaceId)) && !(LIVE_TIERS as readonly string[]).includes(settings.tier)) {
      throw new ApiError(
        'tier_unavailable',
        `tier ${settings.tier} is not available; use t3 (the default) or t1`,
      );
    }
    const problem = variablesProblem(settings.variables);
    if (problem) throw new ApiError('invalid_request', `variables: ${problem}`);
    return settings;
  }
}

/** A contact as uploaded: a number and its variables, unchecked. */
export interface RawContact {
  to: string;
  variables: Record<string, VariableValue>;
}

function checkContacts(
  rows: readonly RawContact[],
  firstRow: number,
): { valid: NewContact[]; rejected: ContactRejection[] } {
  const valid: NewContact[] = [];
  const rejected: ContactRejection[] = [];
  rows.forEach((raw, index) => {
    const row = firstRow + index;
    const number = listableNumber(raw.to);
    if (!('number' in number)) {
      rejected.push({ row, message: `to: ${number.problem}` });
      return;
    }
    const problem = variablesProblem(raw.variables);
    if (problem) {
      rejected.push({ row, message: `variables: ${problem}` });
      return;
    }
    valid.push({ to: number.number, variables: raw.variables });
  });
  return { valid, rejected };
}

function refuseWhileRunning(campaign: { status: CampaignStatus }): void {
  if (campaign.status === 'play') {
    throw new ApiError('conflict', 'the campaign is running (play); pause it first');
  }
}

function unlessRefused<T>(result: T | ContactsRefusal, id: string): T {
  if (result === 'missing') throw notFound(`campaign ${id}`);
  if (result === 'closed') {
    throw new ApiError('conflict', `campaign ${id} is stopped or completed; contacts cannot be added to it`);
  }
  return result;
}

async function presentIn(
  repos: Pick<Repositories, 'campaigns'>,
  record: CampaignRecord,
  sandbox: boolean,
  now: number,
): Promise<CampaignObject> {
  return campaignObject(record, await repos.campaigns.tally(record.id), sandbox, now);
}
