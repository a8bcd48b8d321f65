import { isoTime } from '../clock.ts';
import type { CampaignRecord, ContactRecord, ContactTally } from '../store/campaign-types.ts';
import type { CampaignStatus, CampaignVariables, ContactStatus, PauseReason, Slot } from './settings.ts';
import { nextOpening } from './window.ts';

/** The tier a campaign bills at: T5 in a sandbox workspace, whatever it asked for (interface "Campaigns"). */
export function billingTier(asked: string, sandbox: boolean): string {
  return sandbox ? 't5' : asked;
}

/** The campaign object of the API and of `campaign.*` events. */
export interface CampaignObject {
  id: string;
  object: 'campaign';
  name: string;
  agent_id: string;
  pool_id: string | null;
  tier: string;
  billing_tier: string;
  timezone: string;
  slots: Slot[];
  max_concurrent: number;
  retry_count: number;
  re_attempt_period_secs: number;
  budget_paise: number | null;
  spent_paise: number;
  held_paise: number;
  webhook_url: string | null;
  variables: CampaignVariables;
  status: CampaignStatus;
  pause_reason: PauseReason | null;
  next_window_at: string | null;
  progress: { contacts: Record<ContactStatus, number> & { total: number }; calls_placed: number };
  created_at: string;
  updated_at: string;
}

/** `now` gives `next_window_at`: when the calling hours open next, while they are closed and it is not over. */
export function campaignObject(
  record: CampaignRecord,
  tally: ContactTally,
  sandbox: boolean,
  now: number,
): CampaignObject {
  const s = record.settings;
  const over = record.status === 'stopped' || record.status === 'completed';
  const opening = over ? null : nextOpening(now, s.timezone, s.slots);
  const total = Object.values(tally.byStatus).reduce((sum, n) => sum + n, 0);
  return {
    id: record.id,
    object: 'campaign',
    name: s.name,
    agent_id: s.agent_id,
    pool_id: s.pool_id,
    tier: s.tier,
    billing_tier: billingTier(s.tier, sandbox),
    timezone: s.timezone,
    slots: s.slots,
    max_concurrent: s.max_concurrent,
    retry_count: s.retry_count,
    re_attempt_period_secs: s.re_attempt_period_secs,
    budget_paise: s.budget_paise,
    spent_paise: tally.spentPaise,
    held_paise: tally.heldPaise,
    webhook_url: s.webhook_url,
    variables: s.variables,
    status: record.status,
    pause_reason: record.pauseReason,
    next_window_at: opening === null || opening === now ? null : isoTime(opening),
    progress: { contacts: { ...tally.byStatus, total }, calls_placed: tally.attempts },
    created_at: isoTime(record.createdAt),
    updated_at: isoTime(record.updatedAt),
  };
}

export interface ContactObject {
  id: string;
  object: 'campaign_contact';
  campaign_id: string;
  to: string;
  variables: CampaignVariables;
  status: ContactStatus;
  attempts: number;
  call_ids: string[];
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

export function contactObject(record: ContactRecord): ContactObject {
  return {
    id: record.id,
    object: 'campaign_contact',
    campaign_id: record.campaignId,
    to: record.to,
    variables: record.variables,
    status: record.status,
    attempts: record.attempts,
    call_ids: record.callIds,
    next_attempt_at: record.nextAttemptAt === null ? null : isoTime(record.nextAttemptAt),
    created_at: isoTime(record.createdAt),
    updated_at: isoTime(record.updatedAt),
  };
}
