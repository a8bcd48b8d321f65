import { z } from 'zod';

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export const CAMPAIGN_STATUSES = ['play', 'paused', 'stopped', 'completed'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

export const CONTACT_STATUSES = [
  'pending',
  'calling',
  'completed',
  'suppressed',
  'exhausted',
  'failed',
] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];

/** Why a campaign is paused: not started yet, by its owner, or by itself. */
export const PAUSE_REASONS = [
  'not_started',
  'requested',
  'insufficient_balance',
  'budget_exhausted',
] as const;
export type PauseReason = (typeof PAUSE_REASONS)[number];

export const CAMPAIGN_LIMITS = {
  nameChars: 200,
  slots: 14,
  maxConcurrent: { min: 1, max: 5, default: 5 },
  retryCount: { min: 0, max: 5, default: 2 },
  reAttemptPeriodSecs: { min: 300, max: 86_400, default: 3_600 },
  /** Contacts in one JSON request. */
  contactsPerJsonRequest: 10_000,
  /** Rows of one CSV upload. */
  contactsPerCsv: 100_000,
  /** Bytes of one CSV upload. */
  csvBytes: 32 * 1024 * 1024,
} as const;

/** One calling window: on these weekdays, from `start` to `end` (local "HH:MM"; an end before the start runs past midnight). */
export interface Slot {
  days: Weekday[];
  start: string;
  end: string;
}

export type CampaignVariables = Record<string, string | number | boolean | null>;

/** A campaign's settings as stored and as the API shows them. */
export interface CampaignSettings {
  name: string;
  agent_id: string;
  pool_id: string | null;
  tier: 't1' | 't3' | 't5';
  timezone: string;
  slots: Slot[];
  max_concurrent: number;
  retry_count: number;
  re_attempt_period_secs: number;
  budget_paise: number | null;
  webhook_url: string | null;
  variables: CampaignVariables;
}

const storedSettings = z.object({
  name: z.string(),
  agent_id: z.string(),
  pool_id: z.string().nullable(),
  tier: z.enum(['t1', 't3', 't5']),
  timezone: z.string(),
  slots: z.array(z.object({ days: z.array(z.enum(WEEKDAYS)), start: z.string(), end: z.string() })),
  max_concurrent: z.number(),
  retry_count: z.number(),
  re_attempt_period_secs: z.number(),
  budget_paise: z.number().nullable(),
  webhook_url: z.string().nullable(),
  variables: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
});

/** The one decoder of stored campaign settings. */
export function campaignSettingsOf(json: string): CampaignSettings {
  return storedSettings.parse(JSON.parse(json));
}

/** Whether `zone` is an IANA time zone this runtime knows. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone.length > 0;
  } catch {
    return false;
  }
}

const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$|^24:00$/;

export function isClockTime(value: string): boolean {
  return HH_MM.test(value);
}
