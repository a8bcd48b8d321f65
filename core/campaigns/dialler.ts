import { storedSettings } from '../agents/stored.ts';
import { callWorstCasePaise, DEFAULT_PRICES, type PriceTable, type Tier } from '../billing/prices.ts';
import { admitWithin, MAX_DURATION_SECS } from '../calls/admission.ts';
import { CALLS_QUEUED_CHANNEL } from '../calls/control.ts';
import { isTerminal } from '../calls/state-machine.ts';
import { type Clock, systemClock } from '../clock.ts';
import type { Coordinator, Lock, Unsubscribe } from '../coord/types.ts';
import { ApiError } from '../errors.ts';
import type { AnnounceEvents } from '../events/announce.ts';
import { PollLoop } from '../poll-loop.ts';
import {
  type ActiveCampaign,
  type CampaignRecord,
  type ContactRecord,
  InsufficientBalanceError,
  type Store,
} from '../store/types.ts';
import type { Pacer, PickedNumber } from '../telephony/pacing.ts';
import { contactOutcome } from './outcome.ts';
import { billingTier } from './representation.ts';
import type { CampaignService } from './service.ts';
import { isInsideSlots } from './window.ts';

/** How often the dialler looks at its campaigns without being told (starts wake it earlier). */
const POLL_MS = 1_000;
/**
 * A campaign's leader holds this lock and extends it on every pass and before every call; a leader that dies
 * stops extending, and a standby takes the campaign over within this time.
 */
const LEADER_LOCK_TTL_MS = 10_000;
/** Tells diallers that a campaign was started or resumed. */
export const CAMPAIGNS_STARTED_CHANNEL = 'campaigns:started';

export interface CampaignDiallerOptions {
  store: Store;
  coord: Coordinator;
  campaigns: CampaignService;
  pacer: Pacer;
  /** The workspace's live-call ceiling, which campaign calls and single calls share. */
  liveCallCeiling: number;
  /** Tells the call dialers that calls were queued. */
  wakeCallDialers: () => void;
  announce?: AnnounceEvents;
  prices?: PriceTable;
  clock?: Clock;
  pollMs?: number;
  leaderLockTtlMs?: number;
  reportError?: (error: unknown) => void;
  /** Told of each decision that changes a campaign (a pause, completion), for the log. */
  onDecision?: (decision: { campaignId: string; workspaceId: string; what: string }) => void;
  /** Told when this node takes the lead of a campaign (at its start, or taking over from a stopped leader). */
  onLead?: (campaign: { campaignId: string; workspaceId: string }) => void;
}

/** Why a pass placed no more calls for a campaign. */
type Halt = 'window' | 'room' | 'none_due' | 'pace' | 'money' | 'queue' | 'lost_lead' | 'not_playing';

/** Counts of one pass over a campaign; the benchmark reads them. */
export interface PassReport {
  placed: number;
  suppressed: number;
  settled: number;
  halt: Halt;
}

/**
 * The campaign dialler (worker role). Every campaign that plays, or still has calls out, has one leader among
 * the worker nodes: whoever holds its coordinator lock. On each pass the leader
 *
 * 1. settles the contacts whose calls ended (`completed`, back to `pending` for a retry after the campaign's
 *    period, `exhausted`, `failed`: see `contactOutcome`);
 * 2. ends the campaign `completed` once every contact is final;
 * 3. inside the calling hours, places calls while there is room: at most `max_concurrent` of the campaign's
 *    calls open, and only while the workspace has a live-call slot free that no single call is waiting for
 *    (campaign calls enter the queue only when they can go at once, so a single call waits at most for the
 *    first live call to end);
 * 4. for each due contact, in one transaction: checks the do-not-call list (`suppressed`, no call), holds the
 *    call's worst case in the wallet, inserts the call with its `campaign_id` and claims the contact
 *    (`calling`, with the call's id). A contact is claimed only from `pending`, in the same transaction as its
 *    call, so no take-over or race calls it twice, and a contact in `calling` always names the call to wait for.
 *
 * Calls leave the queue through the ordinary call dialer, as single calls do. The wallet not covering the next
 * call pauses the campaign (`insufficient_balance`), as does its budget (`budget_exhausted`: the charges so far,
 * plus the holds of its open calls, plus the next call's worst case, would pass `budget_paise`); both only once
 * none of its calls is out, since a settling call may free enough. A pool at its pace makes the campaign wait.
 */
export class CampaignDialler {
  private readonly lockTtlMs: number;
  private readonly clock: Clock;
  private readonly prices: PriceTable;
  private readonly reportError: (error: unknown) => void;
  private readonly leads = new Map<string, Lock>();
  /**
   * What each campaign this node leads has spent: read once when it takes the lead, then kept up as it settles
   * the campaign's calls (each one exactly once), so a pass never sums every call the campaign ever placed.
   */
  private readonly spent = new Map<string, number>();
  private readonly loop: PollLoop;
  private started = false;
  private unsubscribers: Unsubscribe[] = [];

  constructor(private readonly options: CampaignDiallerOptions) {
    this.lockTtlMs = options.leaderLockTtlMs ?? LEADER_LOCK_TTL_MS;
    this.clock = options.clock ?? systemClock;
    this.prices = options.prices ?? DEFAULT_PRICES;
    this.reportError = options.reportError ?? (() => {});
    this.loop = new PollLoop(() => this.pass(), options.pollMs ?? POLL_MS, this.reportError);
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const { coord } = this.options;
    // A start, and a freed live-call slot (a call ended: its contact can be settled, another placed).
    this.unsubscribers = [
      await coord.subscribe(CAMPAIGNS_STARTED_CHANNEL, () => this.wake()),
      await coord.subscribe(CALLS_QUEUED_CHANNEL, () => this.wake()),
    ];
    this.loop.start();
  }

  /** Stops leading: the locks are given up so that a standby takes the campaigns over at once. */
  async stop(): Promise<void> {
    this.started = false;
    await this.loop.stop();
    await Promise.allSettled(this.unsubscribers.map((unsubscribe) => unsubscribe()));
    this.unsubscribers = [];
    await Promise.allSettled([...this.leads.values()].map((lock) => lock.release()));
    this.leads.clear();
  }

  wake(): void {
    this.loop.wake();
  }

  /** One pass over every campaign with work; the campaigns this node does not lead are skipped. */
  async pass(): Promise<Map<string, PassReport>> {
    const reports = new Map<string, PassReport>();
    const active = await this.options.store.campaigns.active();
    const activeIds = new Set(active.map((c) => c.id));
    for (const [id, lock] of this.leads) {
      if (!activeIds.has(id)) {
        this.leads.delete(id);
        this.spent.delete(id);
        await lock.release().catch(() => {});
      }
    }
    for (const campaign of active) {
      if (this.loop.stopping) break;
      try {
        const lock = await this.lead(campaign);
        if (!lock) continue;
        reports.set(campaign.id, await this.passCampaign(campaign.workspaceId, campaign.id, lock));
      } catch (error) {
        this.reportError(error);
      }
    }
    return reports;
  }

  private async lead(campaign: ActiveCampaign): Promise<Lock | null> {
    const held = this.leads.get(campaign.id);
    if (held && (await held.extend(this.lockTtlMs))) return held;
    this.leads.delete(campaign.id);
    // Another leader may have settled calls meanwhile.
    this.spent.delete(campaign.id);
    const lock = await this.options.coord.lock(`campaign-dialler:${campaign.id}`, this.lockTtlMs);
    if (lock) {
      this.leads.set(campaign.id, lock);
      if (!held) this.options.onLead?.({ campaignId: campaign.id, workspaceId: campaign.workspaceId });
    }
    return lock;
  }

  private async passCampaign(workspaceId: string, id: string, lock: Lock): Promise<PassReport> {
    const { store } = this.options;
    const report: PassReport = { placed: 0, suppressed: 0, settled: 0, halt: 'not_playing' };
    const campaign = await store.campaigns.get(workspaceId, id);
    if (!campaign) return report;
    report.settled = await this.settleEndedCalls(campaign);
    if (campaign.status !== 'play') return report;

    const state = await store.campaigns.dialState(id);
    if (state.hasContacts && !state.unfinished) {
      await this.settle(campaign, { status: 'completed' }, 'completed: every contact is final');
      return report;
    }
    const now = this.clock.now();
    if (!isInsideSlots(now, campaign.settings.timezone, campaign.settings.slots)) {
      report.halt = 'window';
      return report;
    }
    const room = Math.min(
      campaign.settings.max_concurrent - state.openCalls,
      this.options.liveCallCeiling - (await store.calls.countOpen(workspaceId)),
    );
    if (room <= 0) {
      report.halt = 'room';
      return report;
    }
    const due = await store.campaigns.dueContacts(id, now, room);
    if (due.length === 0) {
      report.halt = 'none_due';
      return report;
    }
    const plan = await this.callPlan(campaign);
    // Spending matters only against a budget.
    const spentPaise = campaign.settings.budget_paise === null ? 0 : await this.spentOf(id);
    const money = { ...state, spentPaise };
    report.halt = 'room';
    for (const contact of due) {
      if (!(await lock.extend(this.lockTtlMs))) {
        report.halt = 'lost_lead';
        break;
      }
      const budget = campaign.settings.budget_paise;
      if (budget !== null && money.spentPaise + money.heldPaise + plan.worstCasePaise > budget) {
        if (money.openCalls === 0) {
          await this.settle(
            campaign,
            { status: 'paused', reason: 'budget_exhausted' },
            `paused: the next call's worst case (${plan.worstCasePaise} paise) would pass the budget`,
          );
        }
        report.halt = 'money';
        break;
      }
      const placed = await this.place(campaign, contact, plan);
      if (placed === 'suppressed') {
        report.suppressed++;
        continue;
      }
      if (placed === 'placed') {
        report.placed++;
        money.heldPaise += plan.worstCasePaise;
        money.openCalls++;
        continue;
      }
      if (placed === 'no_money' && money.openCalls === 0) {
        await this.settle(
          campaign,
          { status: 'paused', reason: 'insufficient_balance' },
          'paused: the wallet cannot cover the next call',
        );
      }
      report.halt = placed === 'no_money' ? 'money' : placed;
      break;
    }
    if (report.placed > 0) this.options.wakeCallDialers();
    return report;
  }

  private async spentOf(campaignId: string): Promise<number> {
    let spent = this.spent.get(campaignId);
    if (spent === undefined) {
      spent = await this.options.store.campaigns.spentPaise(campaignId);
      this.spent.set(campaignId, spent);
    }
    return spent;
  }

  /** Settles the contacts whose calls ended; returns how many. */
  private async settleEndedCalls(campaign: CampaignRecord): Promise<number> {
    const { store } = this.options;
    let settled = 0;
    const rules = {
      retryCount: campaign.settings.retry_count,
      reAttemptPeriodMs: campaign.settings.re_attempt_period_secs * 1_000,
    };
    for (const contact of await store.campaigns.callingContacts(campaign.id)) {
      const callId = contact.callIds.at(-1);
      const call = callId ? await store.calls.get(campaign.workspaceId, callId) : undefined;
      if (call && !isTerminal(call.status)) continue;
      const outcome = call
        ? contactOutcome(call, contact.attempts, rules, this.clock.now())
        : { status: 'failed' as const, nextAttemptAt: null };
      if (await store.campaigns.settleContact(contact.id, 'calling', outcome.status, outcome.nextAttemptAt)) {
        settled++;
        const spent = this.spent.get(campaign.id);
        if (spent !== undefined && call) this.spent.set(campaign.id, spent + call.costPaise);
      }
    }
    return settled;
  }

  /** What every call of this pass shares: tier, duration, worst case, where it rings from. */
  private async callPlan(campaign: CampaignRecord): Promise<CallPlan> {
    const { store } = this.options;
    const { settings, workspaceId } = campaign;
    const [workspace, agent, defaultPool] = await Promise.all([
      store.workspaces.get(workspaceId),
      store.agents.get(workspaceId, settings.agent_id),
      settings.pool_id === null ? store.phonePools.campaignDefault(workspaceId) : Promise.resolve(undefined),
    ]);
    const tier = billingTier(settings.tier, workspace?.mode === 'sandbox') as Tier;
    const maxDurationSecs =
      (agent && storedSettings(agent.content).max_duration_secs) ?? MAX_DURATION_SECS.default;
    return {
      tier,
      maxDurationSecs,
      worstCasePaise: callWorstCasePaise(tier, maxDurationSecs, this.prices),
      poolId: settings.pool_id ?? defaultPool?.id ?? null,
    };
  }

  /** Calls one contact, or suppresses it; what stopped it otherwise. */
  private async place(
    campaign: CampaignRecord,
    contact: ContactRecord,
    plan: CallPlan,
  ): Promise<'placed' | 'suppressed' | 'no_money' | 'pace' | 'queue'> {
    const { store, pacer } = this.options;
    const { workspaceId, settings } = campaign;
    if (await store.dnc.has(workspaceId, contact.to)) {
      return (await store.campaigns.settleContact(contact.id, 'pending', 'suppressed', null))
        ? 'suppressed'
        : 'queue';
    }
    let picked: PickedNumber | null = null;
    if (plan.poolId !== null) {
      try {
        picked = await pacer.pick(workspaceId, plan.poolId);
      } catch (error) {
        if (error instanceof ApiError && (error.code === 'pool_busy' || error.code === 'pool_unavailable'))
          return 'pace';
        throw error;
      }
    }
    try {
      const admitted = await store.transaction(async (repos) => {
        // Listed since the check above: suppressed after all, in the transaction that would have called it.
        if (await repos.dnc.has(workspaceId, contact.to)) {
          await repos.campaigns.settleContact(contact.id, 'pending', 'suppressed', null);
          return 'suppressed' as const;
        }
        const { call, announce } = await admitWithin(
          repos,
          {
            workspaceId,
            agentId: settings.agent_id,
            to: contact.to,
            variables: { ...settings.variables, ...contact.variables },
            webhookUrl: settings.webhook_url,
            maxDurationSecs: plan.maxDurationSecs,
            campaignId: campaign.id,
            ...(picked
              ? { from: picked.from, phoneNumberId: picked.phoneNumberId, poolId: picked.poolId }
              : {}),
          },
          plan.tier,
          { prices: this.prices },
        );
        if (!(await repos.campaigns.claimContact(contact.id, call.id))) throw new ContactTaken();
        return announce ? ('announce' as const) : ('placed' as const);
      });
      if (admitted === 'suppressed') {
        if (picked) await pacer.giveBack(workspaceId, picked).catch(() => {});
        return 'suppressed';
      }
      if (admitted === 'announce') this.options.announce?.();
      return 'placed';
    } catch (error) {
      if (picked) await pacer.giveBack(workspaceId, picked).catch(() => {});
      if (error instanceof InsufficientBalanceError) return 'no_money';
      if (error instanceof ContactTaken) return 'queue';
      if (error instanceof ApiError && error.code === 'rate_limited') return 'queue';
      throw error;
    }
  }

  private async settle(
    campaign: CampaignRecord,
    to: Parameters<CampaignService['settleBySelf']>[2],
    what: string,
  ): Promise<void> {
    const settled = await this.options.campaigns.settleBySelf(campaign.workspaceId, campaign.id, to);
    if (settled) {
      this.options.onDecision?.({ campaignId: campaign.id, workspaceId: campaign.workspaceId, what });
    }
  }
}

interface CallPlan {
  tier: Tier;
  maxDurationSecs: number;
  worstCasePaise: number;
  poolId: string | null;
}

/** Another dialler claimed the contact first (a take-over in progress): this call is rolled back. */
class ContactTaken extends Error {
  override name = 'ContactTaken';
}
