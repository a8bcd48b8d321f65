import { storedSettings } from '../agents/stored.ts';
import type { AgentSettings } from '../agents/types.ts';
import { callWorstCasePaise, DEFAULT_PRICES, type PriceTable, type Tier } from '../billing/prices.ts';
import { ApiError, invalid, notFound } from '../errors.ts';
import type { AnnounceEvents } from '../events/announce.ts';
import { callEvent } from '../events/envelope.ts';
import { newId } from '../ids.ts';
import {
  type CallChannel,
  type CallRecord,
  type CallVariables,
  InsufficientBalanceError,
  type Repositories,
  type Store,
} from '../store/types.ts';
import { callObject } from './representation.ts';

/** Queue depth per workspace (interface "Limits"): calls accepted and not yet ended, queued plus live. */
export const QUEUE_DEPTH_LIMIT = 500;
/**
 * Retry-After of a full queue. Calls drain at the pace of conversations (minutes each), so a client that
 * retries every half minute finds a free place soon after one opens without adding load while none does.
 */
export const QUEUE_FULL_RETRY_AFTER_SECS = 30;
export const DEFAULT_TIER = 't3';
/** Tiers that can be dialled; `t5` is in the contract but refused with `tier_unavailable`. */
export const LIVE_TIERS = ['t1', 't3'] as const;
export const MAX_DURATION_SECS = { min: 30, max: 1_800, default: 300 } as const;

export interface CallRequest {
  workspaceId: string;
  agentId: string;
  /** Default `phone`. */
  channel?: CallChannel;
  /** E.164 destination; required for phone calls (the route validates the format). */
  to?: string | null;
  from?: string | null;
  /** Default `t3`. */
  tier?: string;
  /** Per-call override of the agent's `max_duration_secs`. */
  maxDurationSecs?: number;
  variables?: CallVariables;
  webhookUrl?: string | null;
  phoneNumberId?: string | null;
  poolId?: string | null;
  /** The campaign whose dialler places the call. */
  campaignId?: string | null;
}

export interface AdmissionOptions {
  prices?: PriceTable;
  queueDepthLimit?: number;
  /** Told after commit when a deliverable `call.queued` event was written. */
  announce?: AnnounceEvents;
}

function tierOf(requested: string | undefined): Tier {
  const tier = requested ?? DEFAULT_TIER;
  if (tier === 't5')
    throw new ApiError('tier_unavailable', 'tier t5 is not available; use t3 (the default) or t1');
  if (!(LIVE_TIERS as readonly string[]).includes(tier)) throw invalid('tier', 'expected t1, t3 or t5');
  return tier as Tier;
}

function maxDurationOf(requested: number | undefined, agent: AgentSettings): number {
  const secs = requested ?? agent.max_duration_secs ?? MAX_DURATION_SECS.default;
  if (!Number.isSafeInteger(secs) || secs < MAX_DURATION_SECS.min || secs > MAX_DURATION_SECS.max) {
    throw invalid(
      'max_duration_secs',
      `expected a whole number from ${MAX_DURATION_SECS.min} to ${MAX_DURATION_SECS.max}`,
    );
  }
  return secs;
}

/** The pool the agent calls from (`calls_from.pool_id`), used when the request names no number or pool. */
function agentPool(agent: AgentSettings): string | null {
  return agent.calls_from?.pool_id ?? null;
}

/**
 * Admits a call (`POST /v2/calls` after validation), all in one transaction: the agent must exist in the
 * workspace; the tier gives the rate; the wallet holds the worst case (max duration at that rate, reference =
 * the call id); the queue must have room; the call is inserted `queued`, with its `call.queued` event when the
 * operator enabled those for the workspace. Any refusal rolls everything back: nothing is held or written.
 *
 * The hold comes before the queue count on purpose: on PostgreSQL it takes the wallet account's row lock, so
 * concurrent admissions of one workspace count the queue one after the other and cannot overshoot the limit.
 */
export async function admitCall(
  store: Store,
  request: CallRequest,
  options: AdmissionOptions = {},
  /** More writes that commit with the call, or not at all (the response kept for an `Idempotency-Key`). */
  alongside?: (repos: Repositories, call: CallRecord) => Promise<void>,
): Promise<CallRecord> {
  const tier = tierOf(request.tier);
  try {
    const { call, announce } = await store.transaction(async (repos) => {
      const admitted = await admitWithin(repos, request, tier, options);
      await alongside?.(repos, admitted.call);
      return admitted;
    });
    if (announce) options.announce?.();
    return call;
  } catch (error) {
    if (error instanceof InsufficientBalanceError) {
      throw new ApiError('insufficient_balance', 'the wallet cannot cover this call; top up and retry');
    }
    throw error;
  }
}

/**
 * Admission inside the caller's transaction, at a tier already decided (a campaign dialler admits its calls
 * together with claiming their contacts). Throws `InsufficientBalanceError` when the wallet cannot hold the
 * worst case; `announce` says whether a deliverable `call.queued` event was written.
 */
export async function admitWithin(
  repos: Repositories,
  request: CallRequest,
  tier: Tier,
  options: AdmissionOptions = {},
): Promise<{ call: CallRecord; announce: boolean }> {
  const prices = options.prices ?? DEFAULT_PRICES;
  const queueDepthLimit = options.queueDepthLimit ?? QUEUE_DEPTH_LIMIT;
  const { workspaceId } = request;
  let announce = false;
  const agent = await repos.agents.get(workspaceId, request.agentId);
  if (!agent) throw notFound('agent');
  const settings = storedSettings(agent.content);
  const maxDurationSecs = maxDurationOf(request.maxDurationSecs, settings);
  const id = newId('call');
  await repos.wallet.hold(workspaceId, {
    reference: id,
    amountPaise: callWorstCasePaise(tier, maxDurationSecs, prices),
    kind: 'call',
  });
  const open = await repos.calls.countOpen(workspaceId);
  if (open >= queueDepthLimit) {
    throw new ApiError(
      'rate_limited',
      `queue full: ${queueDepthLimit} calls accepted and not yet ended; retry when calls drain`,
      { retryAfterSecs: QUEUE_FULL_RETRY_AFTER_SECS },
    );
  }
  const phoneNumberId = request.phoneNumberId ?? null;
  const channel = request.channel ?? 'phone';
  const call = await repos.calls.insert({
    id,
    workspaceId,
    agentId: agent.id,
    agentRevision: agent.revision,
    channel,
    toNumber: request.to ?? null,
    fromNumber: request.from ?? null,
    tier,
    perMinPaise: prices.perMinutePaise(tier),
    maxDurationSecs,
    variables: request.variables ?? {},
    webhookUrl: request.webhookUrl ?? null,
    phoneNumberId,
    poolId: request.poolId ?? (phoneNumberId === null && channel === 'phone' ? agentPool(settings) : null),
    campaignId: request.campaignId ?? null,
  });
  const workspace = await repos.workspaces.get(workspaceId);
  if (workspace?.queuedEventsEnabled) {
    await repos.events.append(
      callEvent({
        workspaceId,
        type: 'call.queued',
        call: callObject(call),
        webhookUrl: call.webhookUrl,
        now: call.createdAt,
      }),
    );
    announce = call.webhookUrl !== null;
  }
  return { call, announce };
}
